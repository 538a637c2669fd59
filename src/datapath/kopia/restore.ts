/**
 * Restores a snapshot of a kopia repository into a directory, as cairn restores its own: files in parallel, each
 * written to a temporary name in its directory and renamed into place once complete; every content authenticated
 * and checked against its ID; all-zero 4 KiB blocks left as holes (kopia stores no holes, so a sparse file comes
 * back sparse this way); mode (with setuid, setgid, sticky), owner and modification time restored, a failure to
 * set one reported with its path; symlinks recreated with their target; a full or read-only disk stops the restore
 * with one clear error. Progress counts restored bytes against the snapshot's total; the AbortSignal stops it.
 */
import { promises as fsp, constants as fsc, closeSync, ftruncateSync, rmSync, symlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { Semaphore } from '../../plugins/object-store/limit.js';
import { usableCpus } from '../cpu.js';
import { CancelledError, RepositoryCorruptError, SnapshotNotFoundError } from '../errors.js';
import { RestoreLedger, type RestoreProgress, type RestoreResult } from '../restore-ledger.js';
import { openAsync, renameAsync, writeAllSync, writeChunkSync } from '../restore-writes.js';
import { formatObjectId, type ObjectChunk } from './objects.js';
import type { KopiaRepository } from './repository.js';
import type { KopiaDirEntry } from './snapshots.js';

export interface KopiaRestoreOptions {
  repository: KopiaRepository;
  /** The snapshot (manifest) ID, as Velero records it. */
  snapshotId: string;
  target: string;
  signal?: AbortSignal;
  onProgress?: (p: RestoreProgress) => void;
  progressIntervalMs?: number;
  /** Restore uid/gid (default true). Failures are reported. */
  ownership?: boolean;
  /** Files restored at once. */
  concurrency?: number;
  /** Leave all-zero 4 KiB blocks as holes (default true). */
  sparse?: boolean;
}

/** Contents fetched ahead of the one being written, per file. */
const AHEAD = 4;

export async function restoreKopiaSnapshot(options: KopiaRestoreOptions): Promise<RestoreResult> {
  const started = Date.now();
  const repo = options.repository;
  const snap = repo.loadSnapshot(options.snapshotId);
  if (snap.root.type !== 'd' || !snap.root.object) throw new SnapshotNotFoundError(`snapshot ${snap.id} has no directory at its root`);
  const run = new KopiaRestoreRun(options, snap.root.summary?.totalFileSize ?? 0, snap.root.summary?.totalFileCount ?? 0);
  const target = resolve(options.target);
  try {
    await fsp.mkdir(target, { recursive: true });
    const { done } = await run.dir(snap.root, target, '');
    await run.drain(done);
    run.ledger.reportProgress(true);
    return run.ledger.result(snap.id, started);
  } catch (err) {
    if (options.signal?.aborted) throw new CancelledError();
    throw err;
  }
}

class KopiaRestoreRun {
  readonly ledger: RestoreLedger;
  private readonly files: Semaphore;
  private readonly fetches: Semaphore;
  private readonly inflight = new Set<Promise<void>>();
  private readonly umask = process.umask();

  constructor(
    private readonly options: KopiaRestoreOptions,
    totalBytes: number,
    totalFiles: number,
  ) {
    const cpus = usableCpus();
    this.files = new Semaphore(options.concurrency ?? Math.max(4, cpus * 4));
    this.fetches = new Semaphore(Math.max(8, cpus * 4));
    // The repository failing (a missing pack, a corrupt content) is not one path's problem: it stops the restore.
    this.ledger = new RestoreLedger(options, { bytes: totalBytes, files: totalFiles }, (err) => err instanceof RepositoryCorruptError);
  }

  private get repo(): KopiaRepository {
    return this.options.repository;
  }

  /**
   * Restores a directory's entries into `abs` (which exists); resolves once its subtree is walked and its files are
   * queued, with a promise that settles when they are written and the directory's own attributes are set.
   */
  async dir(self: KopiaDirEntry, abs: string, rel: string): Promise<{ done: Promise<void> }> {
    this.ledger.check();
    const entries = await this.repo.readDirectory(self.object!, this.options.signal);
    const mine: Promise<void>[] = [];
    for (const e of entries) {
      this.ledger.check();
      const childAbs = join(abs, e.name);
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.type === 'd') {
        try {
          await fsp.mkdir(childAbs);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
            this.ledger.report(childRel, err);
            continue;
          }
        }
        mine.push((await this.dir(e, childAbs, childRel)).done.then(() => void this.ledger.stats.dirs++));
      } else if (e.type === 'f' || e.type === 's') {
        await this.files.acquire();
        const p = (e.type === 'f' ? this.file(e, childAbs, childRel) : this.symlink(e, childAbs, childRel))
          .catch((err: unknown) => this.ledger.report(childRel, err))
          .finally(() => {
            this.files.release();
            this.inflight.delete(p);
          });
        this.inflight.add(p);
        mine.push(p);
      } else {
        this.ledger.errors.push({ path: childRel, reason: `entry type "${e.type}" is not restored` });
      }
    }
    // Wrapped: an async function returning the promise itself would wait for the whole subtree.
    const done = Promise.all(mine).then(() => {
      if (!this.ledger.stopped && !this.options.signal?.aborted) this.attributes(abs, rel, self, undefined);
    });
    return { done };
  }

  async drain(done: Promise<void>): Promise<void> {
    await done;
    await Promise.all([...this.inflight]);
    this.ledger.check();
  }

  private async symlink(e: KopiaDirEntry, abs: string, rel: string): Promise<void> {
    if (!e.object) throw new RepositoryCorruptError(`symlink ${rel} has no target object`);
    const target = (await this.repo.objects.read(e.object, this.options.signal)).toString('utf8');
    rmSync(abs, { force: true });
    symlinkSync(target, abs);
    this.attributes(abs, rel, e, undefined, true);
    this.ledger.stats.symlinks++;
  }

  /** The pieces of a file, fetched a few ahead, released in order. */
  private fetcher(chunks: readonly ObjectChunk[]): { next(i: number): Promise<Buffer>; close(): void } {
    const ahead: (Promise<Buffer> | undefined)[] = [];
    const fetch = (i: number): Promise<Buffer> | undefined => {
      const c = chunks[i];
      if (!c) return undefined;
      const p = this.fetches.acquire().then(() =>
        this.repo.objects.readDirect(c.object, this.options.signal).finally(() => this.fetches.release()),
      );
      p.catch(() => undefined); // awaited in order; a later failure must not go unhandled
      return p;
    };
    for (let i = 0; i < Math.min(AHEAD, chunks.length); i++) ahead.push(fetch(i));
    return {
      next: (i) => {
        if (i + AHEAD < chunks.length) ahead.push(fetch(i + AHEAD));
        const p = ahead[i]!;
        ahead[i] = undefined;
        return p;
      },
      close: () => ahead.splice(0),
    };
  }

  private async file(e: KopiaDirEntry, abs: string, rel: string): Promise<void> {
    const chunks = e.object ? await this.repo.objects.chunks(e.object, this.options.signal) : [];
    const tmp = join(dirname(abs), `.${basename(abs)}.${randomBytes(4).toString('hex')}.cairn-restore`);
    const mode = e.mode & 0o777;
    let fd: number | undefined = await openAsync(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, mode);
    const sparse = this.options.sparse !== false;
    const fetcher = this.fetcher(chunks);
    let ok = false;
    try {
      let pos = 0;
      for (let i = 0; i < chunks.length; i++) {
        this.ledger.check();
        const c = chunks[i]!;
        const data = await fetcher.next(i);
        if (c.length >= 0 && data.length !== c.length) {
          throw new RepositoryCorruptError(`piece ${formatObjectId(c.object)} of ${rel} has ${data.length} bytes, its index says ${c.length}`);
        }
        writeChunkSync(fd, data, pos, sparse);
        pos += data.length;
        this.ledger.progress.doneBytes += data.length;
        this.ledger.reportProgress(false);
      }
      if (pos !== e.size) throw new RepositoryCorruptError(`${rel} restored ${pos} bytes, its directory entry says ${e.size}`);
      // Zero blocks at the end were not written: the size comes from the truncate.
      if (sparse) ftruncateSync(fd, pos);
      this.attributes(tmp, rel, e, fd, false, (mode & ~this.umask) === e.mode);
      closeSync(fd);
      fd = undefined;
      await renameAsync(tmp, abs);
      ok = true;
      this.ledger.fileDone(pos);
    } finally {
      fetcher.close();
      if (!ok) {
        if (fd !== undefined) closeSync(fd);
        rmSync(tmp, { force: true });
      }
    }
  }

  /** Mode, owner and time; each failure is reported with the path. */
  private attributes(abs: string, rel: string, e: KopiaDirEntry, fd: number | undefined, symlink = false, modeIsSet = false): void {
    // Seconds with microseconds (what a double carries), rounded as cairn's own restore rounds.
    const mtimeSeconds = (Number(e.mtimeNs / 1000n) + 0.5) / 1e6;
    this.ledger.setAttributes({ abs, rel, fd, symlink, modeIsSet }, { uid: e.uid, gid: e.gid, mode: e.mode, mtimeSeconds });
  }
}

/** Writes the single file of a block-volume snapshot (Velero's data mover backs a device up as a directory holding one file) to a device. */
export async function restoreKopiaBlockSnapshot(opts: {
  repository: KopiaRepository;
  snapshotId: string;
  devicePath: string;
  signal?: AbortSignal;
  onProgress?: (p: { totalBytes: number; doneBytes: number }) => void;
}): Promise<{ bytes: number; durationMs: number }> {
  const started = Date.now();
  const snap = opts.repository.loadSnapshot(opts.snapshotId);
  if (snap.root.type !== 'd' || !snap.root.object) throw new SnapshotNotFoundError(`snapshot ${snap.id} has no directory at its root`);
  const entries = (await opts.repository.readDirectory(snap.root.object, opts.signal)).filter((e) => e.type === 'f');
  if (entries.length !== 1 || !entries[0]!.object) throw new RepositoryCorruptError(`snapshot ${snap.id} is not a block volume snapshot (its root holds ${entries.length} files, not 1)`);
  const file = entries[0]!;
  const chunks = await opts.repository.objects.chunks(file.object!, opts.signal);
  const fh = await fsp.open(opts.devicePath, fsc.O_WRONLY);
  let pos = 0;
  try {
    for (const c of chunks) {
      opts.signal?.throwIfAborted();
      const data = await opts.repository.objects.readDirect(c.object, opts.signal);
      writeAllSync(fh.fd, data, 0, data.length, pos);
      pos += data.length;
      opts.onProgress?.({ totalBytes: file.size, doneBytes: pos });
    }
    await fh.sync();
  } catch (err) {
    if (opts.signal?.aborted) throw new CancelledError();
    throw err;
  } finally {
    await fh.close();
  }
  if (pos !== file.size) throw new RepositoryCorruptError(`block snapshot ${snap.id} restored ${pos} bytes, its entry says ${file.size}`);
  return { bytes: pos, durationMs: Date.now() - started };
}
