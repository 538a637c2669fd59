/**
 * Restore: a whole snapshot or a sub-path into a directory. Files are restored in parallel, each written to a temp
 * name in its directory and renamed into place once complete, with every chunk authenticated and checked against
 * its keyed ID. Holes are recreated for zero runs; mode, ownership and times are restored, and any failure to do
 * so is reported with its path (never ignored). A full disk stops the restore with one clear error.
 */
import { promises as fsp, constants as fsc, closeSync, ftruncateSync, linkSync, rmSync, symlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { Semaphore } from '../plugins/object-store/limit.js';
import { CancelledError, SnapshotNotFoundError } from './errors.js';
import type { Repository } from './repository.js';
import type { BlobLease } from './open-pool.js';
import { isZeroRun, readTree, utimeSeconds, type TreeEntry } from './tree.js';
import { usableCpus } from './cpu.js';
import { bootSpareWorkers } from './worker-threads.js';
import { SmallFileRestorer } from './small-files.js';
import { openAsync, renameAsync, writeAllSync, writeChunkSync } from './restore-writes.js';
import { RestoreLedger, type RestoreProgress, type RestoreResult } from './restore-ledger.js';

export { RestoreFailedError, type RestoreIssue, type RestoreProgress, type RestoreResult, type RestoreStats } from './restore-ledger.js';

export interface RestoreOptions {
  repository: Repository;
  /** Full ID, unique prefix, or "latest". */
  snapshotId: string;
  target: string;
  /** Restore only this path inside the snapshot ('a/b'); its contents land in target. */
  path?: string;
  signal?: AbortSignal;
  onProgress?: (p: RestoreProgress) => void;
  progressIntervalMs?: number;
  /** Restore uid/gid (default true). Failures are reported. */
  ownership?: boolean;
  /** Files restored at once. */
  concurrency?: number;
  /**
   * Worker threads that decrypt, decompress and verify, and write small files whole (default: usable CPUs; 0 = all on
   * this thread).
   */
  workers?: number;
}

/** The process umask, read once (process.umask() with no argument is the only way to read it). */
const UMASK = process.umask();

/**
 * Boots the worker threads a restore with default settings uses, to be called before the repository is opened: their
 * start-up then overlaps the key derivation (worker-threads.ts).
 */
export function bootRestoreWorkers(): void {
  bootSpareWorkers(usableCpus());
}

export async function restore(options: RestoreOptions): Promise<RestoreResult> {
  const repo = options.repository;
  const started = Date.now();
  const lock = await repo.lock({ exclusive: false });
  try {
    await repo.loadIndex();
    // The main thread only walks listings and reads packs here, so every core gets a worker.
    repo.useWorkers(options.workers ?? usableCpus());
    // Windows of 4 MiB (up to MAX_WINDOWS in repository.ts): more, smaller windows than 4 of 8 MiB re-read less.
    repo.useReadWindows(4 << 20);
    const snap = await repo.findSnapshot(options.snapshotId);
    const run = new RestoreRun(repo, options, options.path ? 0 : snap.summary.bytes, options.path ? 0 : snap.summary.files);
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
    await lock.release().catch(() => undefined);
  }
}

class RestoreRun {
  readonly ledger: RestoreLedger;
  private readonly slots: Semaphore;
  private readonly small: SmallFileRestorer | undefined;
  private readonly fetchSlots: Semaphore;
  private readonly inflight = new Set<Promise<void>>();
  private readonly linkTargets = new Map<string, { abs: string; done: Promise<boolean> }>();

  constructor(
    private readonly repo: Repository,
    private readonly options: RestoreOptions,
    totalBytes: number,
    totalFiles: number,
  ) {
    this.slots = new Semaphore(options.concurrency ?? Math.max(4, usableCpus() * 4));
    this.fetchSlots = new Semaphore(Math.max(4, (options.workers ?? usableCpus()) * 4));
    this.ledger = new RestoreLedger(options, { bytes: totalBytes, files: totalFiles });
    const pool = repo.workers;
    if (pool) {
      this.small = new SmallFileRestorer({
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
    }
  }

  async find(tree: string[], parts: string[]): Promise<TreeEntry | undefined> {
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
  async dir(tree: string[], abs: string, rel: string, self?: TreeEntry): Promise<{ done: Promise<void> }> {
    this.ledger.check();
    const mine: Promise<unknown>[] = [];
    const own = new Set<Promise<void>>();
    let lastBatch: Promise<void> | undefined;
    for await (const e of readTree(tree, (id) => this.repo.loadTreeBlob(id))) {
      this.ledger.check();
      if (e.t === 'd') {
        const childAbs = join(abs, e.n);
        const childRel = rel ? `${rel}/${e.n}` : e.n;
        try {
          await fsp.mkdir(childAbs);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
            this.ledger.report(childRel, err);
            continue;
          }
        }
        mine.push((await this.dir(e.sub ?? [], childAbs, childRel, e)).done.then(() => void this.ledger.stats.dirs++));
      } else if (this.small && SmallFileRestorer.eligible(e)) {
        const queued = await this.small.add(e, abs, rel ? `${rel}/${e.n}` : e.n);
        if (queued && queued.batch !== lastBatch) mine.push((lastBatch = queued.batch));
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
    const tmp = join(dirname(abs), `.${basename(abs)}.${randomBytes(4).toString('hex')}.cairn-restore`);
    // Writes and attribute calls are synchronous: they hit the page cache in microseconds, far below the cost of a
    // thread-pool round trip per call; files still overlap through their (asynchronous) chunk fetches.
    // Created with its final permission bits when the umask allows, which saves an fchmod per file.
    // Creating a file is the one step that can wait on the filesystem journal or directory locks (milliseconds on a
    // busy disk): it runs on the thread pool so several creations overlap; the rest stays synchronous.
    let fd: number | undefined = await openAsync(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, e.m & 0o777);
    let sparse = false;
    let ok = false;
    let aheadOut: (Promise<BlobLease> | undefined)[] = [];
    try {
      let pos = 0;
      if (e.in !== undefined) {
        const data = Buffer.from(e.in, 'base64');
        writeAllSync(fd, data, 0, data.length, 0);
        pos = data.length;
      } else {
        const items = e.c ?? [];
        // A file that had zero runs is written sparsely: all-zero 4 KiB blocks become holes.
        sparse = items.some(isZeroRun);
        // Fetch a few chunks ahead so one large file also restores in parallel; write them in order.
        const ahead: (Promise<BlobLease> | undefined)[] = [];
        aheadOut = ahead;
        const fetch = (i: number) => {
          const item = items[i];
          if (typeof item !== 'string') return undefined;
          // Chunks in flight are bounded across all files (memory stays flat); slots are taken in request order, and
          // each file asks for its chunks in order, so an earlier chunk never waits behind a later one of its file.
          const p = this.fetchSlots.acquire().then(() =>
            this.repo.loadBlobLease(item, this.options.signal ? { signal: this.options.signal } : {}).then(
              (lease) => ({
                data: lease.data,
                release: () => {
                  lease.release();
                  this.fetchSlots.release();
                },
              }),
              (err: unknown) => {
                this.fetchSlots.release();
                throw err;
              },
            ),
          );
          p.catch(() => undefined); // awaited in order below; a failure after an earlier one must not go unhandled
          return p;
        };
        for (let i = 0; i < Math.min(4, items.length); i++) ahead.push(fetch(i));
        for (let i = 0; i < items.length; i++) {
          this.ledger.check();
          const item = items[i]!;
          const pending = ahead[i];
          if (i + 4 < items.length) ahead.push(fetch(i + 4));
          if (isZeroRun(item)) {
            pos += item.z;
            continue;
          }
          if (typeof item === 'object') {
            // A bundle slice off the batch path (no worker threads): the bundle is opened for this file alone.
            const lease = await this.repo.loadBlobLease(item.b, this.options.signal ? { signal: this.options.signal } : {});
            try {
              if (item.o + item.l > lease.data.length) throw new Error(`bundle ${item.b.slice(0, 16)} is shorter than its slice`);
              writeChunkSync(fd, lease.data.subarray(item.o, item.o + item.l), pos, sparse);
            } finally {
              lease.release();
            }
            pos += item.l;
            this.ledger.progress.doneBytes += item.l;
            continue;
          }
          const lease = await pending!;
          ahead[i] = undefined;
          const data = lease.data;
          try {
            writeChunkSync(fd, data, pos, sparse);
          } finally {
            lease.release();
          }
          pos += data.length;
          this.ledger.progress.doneBytes += data.length;
          this.ledger.reportProgress(false);
        }
      }
      // Only a file with holes can end short of its size (a trailing hole, or zero blocks not written).
      if (sparse) ftruncateSync(fd, pos);
      this.attributes(tmp, rel, e, fd, false, (e.m & 0o777 & ~UMASK) === e.m);
      closeSync(fd);
      fd = undefined;
      await renameAsync(tmp, abs);
      ok = true;
      this.ledger.fileDone(pos);
    } finally {
      if (!ok) {
        if (fd !== undefined) closeSync(fd);
        rmSync(tmp, { force: true });
        // Give back the buffers and fetch slots of chunks fetched ahead but never written.
        for (const p of aheadOut) p?.then((l) => l.release(), () => undefined);
      }
    }
  }

  /** Mode, owner and times; each failure is reported with the path. */
  private attributes(abs: string, rel: string, e: TreeEntry, fd: number | undefined, symlink = false, modeIsSet = false): void {
    this.ledger.setAttributes({ abs, rel, fd, symlink, modeIsSet }, { uid: e.u, gid: e.g, mode: e.m, mtimeSeconds: utimeSeconds(e.mt) });
  }
}
