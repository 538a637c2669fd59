/**
 * Restore: a whole snapshot or a sub-path into a directory. Files are restored in parallel, each written under its
 * own name when new (replacing an existing entry through a temp name renamed into place; a file that fails is
 * removed, never left partial), with every chunk authenticated and checked against
 * its keyed ID. Holes are recreated for zero runs; mode, ownership and times are restored, and any failure to do
 * so is reported with its path (never ignored). A full disk stops the restore with one clear error.
 */
import { promises as fsp, ftruncateSync, linkSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Semaphore } from '../plugins/object-store/limit.js';
import { CancelledError, SnapshotNotFoundError } from './errors.js';
import type { BlobId, PackId } from './ids.js';
import type { BlobIndex, BlobLoader, RestoreReader, WithLocks, WithSnapshots } from './repository-roles.js';
import { isZeroRun, readTree, utimeSeconds, type ContentItem, type TreeEntry } from './tree.js';
import { usableCpus } from './cpu.js';
import { bootSpareWorkers } from './worker-threads.js';
import { SmallFileRestorer } from './small-files.js';
import { SmallFileGroups } from './small-file-groups.js';
import type { PackSpan } from './read-plan.js';
import { ByteBudget, cut, layoutPieces, READ_BUDGET_BYTES, ReadBuffers, type FilePiece } from './restore-reads.js';
import { PieceReads } from './piece-reads.js';
import { writeAllSync, writeRestoredFile } from './restore-writes.js';
import { preallocate } from './preallocate.js';
import { RestoreLedger, type RestoreResult, type RestoreRunOptions } from './restore-ledger.js';
import { tuneHeapForDataPath, type HeapTuning } from './heap-tuning.js';
import type { HeldLock } from './locks.js';

export { RestoreFailedError, type RestoreIssue, type RestoreProgress, type RestoreResult, type RestoreStats } from './restore-ledger.js';

/** What a restore uses of a repository (repository-roles.ts). */
export type RestoreRepository = BlobIndex & Pick<BlobLoader, 'loadTreeBlob'> & RestoreReader & WithSnapshots & WithLocks;

export interface RestoreOptions extends RestoreRunOptions {
  repository: RestoreRepository;
  /** Full ID, unique prefix, or "latest". */
  snapshotId: string;
  /** Restore only this path inside the snapshot ('a/b'); its contents land in target. */
  path?: string;
  /**
   * Worker threads that decrypt, decompress and verify, and write small files whole (default: usable CPUs; 0 = all on
   * this thread).
   */
  workers?: number;
  /** Bytes of pack reads in flight or fetched ahead, across the restore (default 64 MiB): what read-ahead may hold. */
  readBudgetBytes?: number;
}

/**
 * Reads of large files' pieces in flight (each up to 4 MiB; the byte budget caps them with the small files' reads):
 * more than the store's 8 connections, so the next requests are queued while earlier reads are being written.
 */
const PIECE_READS = 12;
/** Content items of one file handed to the reads at a time (a file of a million chunks is not planned at once). */
const PLAN_ITEMS = 128;

/** The process umask, read once (process.umask() with no argument is the only way to read it). */
const UMASK = process.umask();

/**
 * Boots the worker threads a restore with default settings uses, to be called once the store is made and before the
 * repository is opened: their start-up then overlaps the repository's first reads (worker-threads.ts).
 */
export function bootRestoreWorkers(): void {
  bootSpareWorkers(usableCpus());
}

export async function restore(options: RestoreOptions): Promise<RestoreResult> {
  const repo = options.repository;
  const started = Date.now();
  const heap = tuneHeapForDataPath();
  let lock: HeldLock | undefined;
  try {
    lock = await repo.locks.lock({ exclusive: false });
    await repo.loadIndex();
    // The main thread only walks listings and reads packs here, so every core gets a worker.
    repo.useWorkers(options.workers ?? usableCpus());
    // File data comes in planned reads (restore-reads.ts), the listings from whole tree packs (tree-packs.ts); what
    // is still read blob by blob (a listing outside a tree pack's span, a blob a group's reads did not cover) goes
    // through windows of 4 MiB.
    repo.useReadWindows(4 << 20);
    const snap = await repo.snapshots.find(options.snapshotId);
    const run = new RestoreRun(repo, options, heap, options.path ? 0 : snap.summary.bytes, options.path ? 0 : snap.summary.files);
    const target = resolve(options.target);
    await fsp.mkdir(target, { recursive: true });
    const sub = (options.path ?? '').split('/').filter(Boolean);
    let done: Promise<unknown> = Promise.resolve();
    try {
      if (sub.length === 0) {
        done = (await run.dir(snap.tree, target, '')).done;
      } else {
        const entry = await run.find(snap.tree, sub);
        if (!entry) throw new SnapshotNotFoundError(`path ${options.path} is not in snapshot ${snap.id.slice(0, 8)}`);
        if (entry.t === 'd') done = (await run.dir(entry.sub ?? [], target, sub.join('/'), entry)).done;
        else await run.entry(entry, target, sub.slice(0, -1).join('/'));
      }
    } finally {
      // Also after a failure: nothing may still be writing when the workers are closed.
      await run.drain(done);
    }
    run.ledger.reportProgress(true);
    return run.ledger.result(snap.id, started);
  } catch (err) {
    if (options.signal?.aborted) throw new CancelledError();
    throw err;
  } finally {
    await repo.closeWorkers();
    await lock?.release().catch(() => undefined);
    heap.release();
  }
}

class RestoreRun {
  readonly ledger: RestoreLedger;
  private readonly slots: Semaphore;
  private readonly small: SmallFileGroups | undefined;
  /** Blobs being opened and written at once, across files: bounds the pooled buffers in use. */
  private readonly openSlots: Semaphore;
  /** Bytes of pack reads in flight or fetched ahead, across files and the small-file groups. */
  private readonly budget: ByteBudget;
  /** Buffers of finished reads, kept for the next ones (up to half the budget). */
  private readonly buffers: ReadBuffers;
  /** The reads of the large files being written, planned across them. */
  private readonly pieces: PieceReads<FilePiece>;
  private readonly inflight = new Set<Promise<void>>();
  private readonly linkTargets = new Map<string, { abs: string; done: Promise<boolean> }>();
  /** Entries the walk has come to, for looking at the heap every 1,024 of them. */
  private walked = 0;

  constructor(
    private readonly repo: RestoreRepository,
    private readonly options: RestoreOptions,
    private readonly heap: HeapTuning,
    totalBytes: number,
    totalFiles: number,
  ) {
    const budget = options.readBudgetBytes ?? READ_BUDGET_BYTES;
    this.budget = new ByteBudget(budget);
    this.buffers = new ReadBuffers(budget / 2);
    this.slots = new Semaphore(options.concurrency ?? Math.max(4, usableCpus() * 4));
    this.openSlots = new Semaphore(Math.max(4, (options.workers ?? usableCpus()) * 4));
    this.pieces = new PieceReads({ budget: this.budget, buffers: this.buffers, maxReads: PIECE_READS, read: (span, first, target) => repo.readPackSpan(span, first, options.signal, target) });
    this.ledger = new RestoreLedger(options, { bytes: totalBytes, files: totalFiles });
    const pool = repo.workers;
    if (pool) {
      const restorer = new SmallFileRestorer({
        repository: repo,
        pool,
        ownership: options.ownership !== false,
        umask: UMASK,
        ...(options.signal ? { signal: options.signal } : {}),
        callbacks: {
          done: (_rel, bytes) => {
            this.ledger.fileDone(bytes);
            this.ledger.progress.doneBytes += bytes;
            this.ledger.reportProgress(false);
          },
          issue: (rel, err) => this.ledger.report(rel, err),
          fatal: (err) => this.ledger.stop(err),
        },
      });
      this.small = new SmallFileGroups({
        restorer,
        repository: repo,
        budget: this.budget,
        buffers: this.buffers,
        ...(options.signal ? { signal: options.signal } : {}),
        stopped: () => this.ledger.stopped || (options.signal?.aborted ?? false),
      });
    }
  }

  async find(tree: BlobId[], parts: string[]): Promise<TreeEntry | undefined> {
    let ids = tree;
    for (let i = 0; i < parts.length; i++) {
      let found: TreeEntry | undefined;
      for await (const e of readTree(ids, (id) => this.repo.loadTreeBlob(id))) {
        if (e.n === parts[i]) {
          found = e;
          break;
        }
      }
      if (!found) return undefined;
      if (i === parts.length - 1) return found;
      if (found.t !== 'd') return undefined;
      ids = found.sub ?? [];
    }
    return undefined;
  }

  /**
   * Restores a listing into `abs` (which exists). Resolves once the listing is walked and every file is queued or
   * being written; `done` settles when the directory's files and subdirectories are complete and its own attributes
   * are set (files change a directory's times, so those come last). Nothing in the walk waits for `done`, so a
   * directory's files can still be in a worker's batch while the walk goes on.
   */
  async dir(tree: BlobId[], abs: string, rel: string, self?: TreeEntry): Promise<{ done: Promise<void> }> {
    this.ledger.check();
    const mine: Promise<unknown>[] = [];
    const own = new Set<Promise<void>>();
    let lastGroup: Promise<void> | undefined;
    for await (const e of readTree(tree, (id) => this.repo.loadTreeBlob(id))) {
      this.ledger.check();
      if ((++this.walked & 1023) === 0) this.heap.check();
      if (e.t === 'd') {
        const childAbs = join(abs, e.n);
        const childRel = rel ? `${rel}/${e.n}` : e.n;
        if (!this.ledger.madeDir(childAbs, childRel)) continue;
        mine.push((await this.dir(e.sub ?? [], childAbs, childRel, e)).done.then(() => void this.ledger.stats.dirs++));
      } else if (this.small && SmallFileRestorer.eligible(e)) {
        const { group } = await this.small.add(e, abs, rel ? `${rel}/${e.n}` : e.n);
        if (group !== lastGroup) mine.push((lastGroup = group));
      } else {
        await this.slots.acquire();
        const p = this.entry(e, abs, rel)
          .catch((err: unknown) => this.ledger.report(rel ? `${rel}/${e.n}` : e.n, err))
          .finally(() => {
            this.slots.release();
            own.delete(p);
            this.inflight.delete(p);
          });
        own.add(p);
        this.inflight.add(p);
      }
    }
    mine.push(...own);
    const done = Promise.all(mine).then(() => {
      if (self && !this.ledger.stopped && !this.options.signal?.aborted) this.attributes(abs, rel, self, undefined);
    });
    return { done };
  }

  /** Waits for the walk's completion promise, every batch and every file in flight; throws a fatal error. */
  async drain(done: Promise<unknown>): Promise<void> {
    await this.small?.drain();
    await done;
    await Promise.all([...this.inflight]);
    this.ledger.check();
  }

  async entry(e: TreeEntry, dirAbs: string, dirRel: string): Promise<void> {
    const abs = join(dirAbs, e.n);
    const rel = dirRel ? `${dirRel}/${e.n}` : e.n;
    if (e.t === 'l') {
      rmSync(abs, { force: true });
      symlinkSync(e.tg ?? '', abs);
      this.attributes(abs, rel, e, undefined, true);
      this.ledger.stats.symlinks++;
      return;
    }
    if (e.hl !== undefined) {
      const first = this.linkTargets.get(e.hl);
      if (first && (await first.done)) {
        rmSync(abs, { force: true });
        linkSync(first.abs, abs);
        this.ledger.stats.files++;
        this.ledger.progress.doneFiles++;
        return;
      }
    }
    if (e.nl === undefined) return this.file(e, abs, rel);
    // The first name of a hard-linked file: later names link to it once it is complete.
    const done = this.file(e, abs, rel).then(
      () => true,
      (err: unknown) => {
        throw err;
      },
    );
    this.linkTargets.set(rel, { abs, done: done.catch(() => false) });
    await done;
  }

  private async file(e: TreeEntry, abs: string, rel: string): Promise<void> {
    // Writes and attribute calls are synchronous: they hit the page cache in microseconds, far below the cost of a
    // thread-pool round trip per call; files still overlap through their (asynchronous) chunk fetches.
    // Created with its final permission bits when the umask allows, which saves an fchmod per file.
    const size = await writeRestoredFile(abs, e.m & 0o777, async (fd, written) => {
      let sparse = false;
      let reserved = 0;
      let pos: number;
      if (e.in !== undefined) {
        const data = Buffer.from(e.in, 'base64');
        writeAllSync(fd, data, 0, data.length, 0);
        pos = data.length;
      } else {
        const items = e.c ?? [];
        // A file that had zero runs is written sparsely: all-zero 4 KiB blocks become holes.
        sparse = items.some(isZeroRun);
        // Its blocks reserved first (not where holes are wanted): see preallocate.ts for why a restore waits without.
        if (!sparse) reserved = preallocate(fd, e.s ?? 0);
        pos = await this.writeContent(fd, items, sparse);
      }
      // A file with holes can end short of its size (a trailing hole, or zero blocks not written); a reserved one
      // only if its listing named a size its content does not have.
      if (sparse || pos < reserved) ftruncateSync(fd, pos);
      this.attributes(written, rel, e, fd, false, (e.m & 0o777 & ~UMASK) === e.m);
      return pos;
    });
    this.ledger.fileDone(size);
  }

  /**
   * Writes a file's content into `fd` and returns its size: its pieces go to the shared reads (piece-reads.ts), which
   * plan them together with the other files' and write each at its offset as it is opened, so one large file also
   * restores in parallel. A long content list is handed over PLAN_ITEMS at a time. Every piece is settled before this
   * returns or throws (the caller closes the descriptor).
   */
  private async writeContent(fd: number, items: readonly ContentItem[], sparse: boolean): Promise<number> {
    const owner = {};
    let size = 0;
    for (let from = 0; from < items.length; from += PLAN_ITEMS) {
      this.ledger.check();
      const window = layoutPieces(items.slice(from, from + PLAN_ITEMS), this.repo.index);
      for (const p of window.pieces) p.pos += size;
      size += window.size;
      await this.pieces.submit(
        owner,
        window.pieces.map((p) => ({ piece: p, write: (read, data) => this.writePiece(fd, read, data, p, sparse) })),
      );
    }
    return size;
  }

  private async writePiece(fd: number, read: PackSpan<PackId>, data: Buffer, p: FilePiece, sparse: boolean): Promise<void> {
    await this.openSlots.acquire();
    try {
      // Opened and written on a worker thread: this thread only reads packs and walks listings.
      const written = await this.repo.writeBlobAt(p.hex, p.loc, p.span.pack, cut(read, data, p.span), { fd, pos: p.pos, sparse, ...(p.slice ? { slice: [p.slice.o, p.slice.l] as [number, number] } : {}) });
      this.ledger.progress.doneBytes += written;
      this.ledger.reportProgress(false);
    } finally {
      this.openSlots.release();
    }
  }

  /** Mode, owner and times; each failure is reported with the path. */
  private attributes(abs: string, rel: string, e: TreeEntry, fd: number | undefined, symlink = false, modeIsSet = false): void {
    this.ledger.setAttributes({ abs, rel, fd, symlink, modeIsSet }, { uid: e.u, gid: e.g, mode: e.m, mtimeSeconds: utimeSeconds(e.mt) });
  }
}
