/**
 * Restores a snapshot of a kopia repository into a directory, as cairn restores its own: files in parallel, each
 * written under its own name when new, or through a temporary name renamed into place when it replaces an entry. This thread walks the
 * directories and reads the packs; worker threads (content-pool.ts) open each content and write it, a whole small
 * file or a piece of a large one at its offset, so the crypto, the writes and the file-system calls use every core.
 * Every content is authenticated (which binds it to its ID); all-zero 4 KiB blocks are left as holes (kopia stores
 * no holes, so a sparse file comes back sparse this way); mode (with setuid, setgid, sticky), owner and modification
 * time are restored, a failure to set one reported with its path; symlinks are recreated with their target; a full
 * or read-only disk stops the restore with one clear error. Progress counts restored bytes against the snapshot's total; the AbortSignal stops it.
 */
import { promises as fsp, constants as fsc, ftruncateSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Semaphore } from '../../plugins/object-store/limit.js';
import { usableCpus } from '../cpu.js';
import { tuneHeapForDataPath, type HeapTuning } from '../heap-tuning.js';
import { CancelledError, RepositoryCorruptError, SnapshotNotFoundError } from '../errors.js';
import { RestoreLedger, type RecordedAttributes, type RestoreResult, type RestoreRunOptions } from '../restore-ledger.js';
import { restoreTempPath, writeRestoredFile } from '../restore-writes.js';
import { KopiaContentPool } from './content-pool.js';
import type { ContentInfo } from './index.js';
import { directObjectLength, type ObjectChunk } from './objects.js';
import { planPackReads, type PackRead, type PackSpan } from '../read-plan.js';
import type { KopiaRepository } from './repository.js';
import type { KopiaDirEntry } from './snapshots.js';

export interface KopiaRestoreOptions extends RestoreRunOptions {
  repository: KopiaRepository;
  /** The snapshot (manifest) ID, as Velero records it. */
  snapshotId: string;
  /** Leave all-zero 4 KiB blocks as holes (default true). */
  sparse?: boolean;
}

/** Pieces of one file read and written at once (each piece of a large file is a few MiB). */
const AHEAD = 4;

/**
 * Writes an object's pieces into `fd` at their offsets: each piece read from its pack on this thread, then opened
 * and written by a content worker, up to AHEAD pieces at once (and `reads` across the restore). Resolves with the
 * bytes written once every piece is settled, so the caller may close the descriptor; the first failure is thrown.
 */
async function writeObject(opts: {
  repo: KopiaRepository;
  pool: KopiaContentPool;
  reads: Semaphore;
  chunks: readonly ObjectChunk[];
  fd: number;
  sparse: boolean;
  signal: AbortSignal | undefined;
  /** Called before each piece is read (throws to stop). */
  check: () => void;
  onBytes: (n: number) => void;
}): Promise<number> {
  let next = 0;
  let written = 0;
  let failure: unknown;
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < opts.chunks.length) {
      const c = opts.chunks[next++]!;
      try {
        opts.check();
        await opts.reads.acquire();
        try {
          const { info, sealed } = await opts.repo.contents.readSealed(c.object.contentId, opts.signal);
          const n = await opts.pool.write({ info, sealed, objectCompressed: c.object.compressed, expectedLength: c.length }, { fd: opts.fd, position: c.start, sparse: opts.sparse });
          written += n;
          opts.onBytes(n);
        } finally {
          opts.reads.release();
        }
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(AHEAD, opts.chunks.length) }, lane));
  if (failure !== undefined) throw failure;
  return written;
}

export async function restoreKopiaSnapshot(options: KopiaRestoreOptions): Promise<RestoreResult> {
  const started = Date.now();
  const repo = options.repository;
  const snap = repo.loadSnapshot(options.snapshotId);
  if (snap.root.type !== 'd' || !snap.root.object) throw new SnapshotNotFoundError(`snapshot ${snap.id} has no directory at its root`);
  const heap = tuneHeapForDataPath();
  const pool = new KopiaContentPool(repo.contentWorkerData(), usableCpus());
  const run = new KopiaRestoreRun(options, pool, heap, snap.root.summary?.totalFileSize ?? 0, snap.root.summary?.totalFileCount ?? 0);
  const target = resolve(options.target);
  try {
    await fsp.mkdir(target, { recursive: true });
    const { done } = await run.dir(snap.root, target, '');
    await run.drain(done);
    run.ledger.reportProgress(true);
    return run.ledger.result(snap.id, started);
  } catch (err) {
    // Files the workers are writing finish (or stop at their next check) first: a worker ended mid-file would leave
    // its temporary file in the target.
    await run.settle();
    if (options.signal?.aborted) throw new CancelledError();
    throw err;
  } finally {
    await pool.close();
    heap.release();
  }
}

class KopiaRestoreRun {
  readonly ledger: RestoreLedger;
  private readonly files: Semaphore;
  private readonly reads: Semaphore;
  /** Pieces of large files in flight (each a few MiB): they bound the memory a restore holds. */
  private readonly pieces: Semaphore;
  private readonly inflight = new Set<Promise<void>>();
  private readonly umask = process.umask();
  /** Entries the walk has come to, for looking at the heap every 1,024 of them. */
  private walked = 0;

  constructor(
    private readonly options: KopiaRestoreOptions,
    private readonly pool: KopiaContentPool,
    private readonly heap: HeapTuning,
    totalBytes: number,
    totalFiles: number,
  ) {
    const cpus = usableCpus();
    // Files and pack reads in flight: enough that the content workers always have the next file queued while this
    // thread waits on a read or a directory listing (measured: 8 left the workers idle a quarter of the time).
    this.files = new Semaphore(options.concurrency ?? Math.max(16, cpus * 8));
    this.reads = new Semaphore(Math.max(16, cpus * 8));
    this.pieces = new Semaphore(Math.max(4, cpus * 2));
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
    // Files of one content first, read together with their neighbours in the pack; then the rest in order.
    const small: SmallFile[] = [];
    const rest: KopiaDirEntry[] = [];
    for (const e of entries) {
      if ((++this.walked & 1023) === 0) this.heap.check();
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.type !== 'f' || !e.object || e.object.indirection > 0) rest.push(e);
      else {
        try {
          small.push({ e, abs: join(abs, e.name), rel: childRel, info: this.repo.contents.info(e.object.contentId) });
        } catch (err) {
          this.ledger.report(childRel, err);
        }
      }
    }
    for (const read of planPackReads(small, contentSpan)) {
      this.ledger.check();
      await this.reads.acquire();
      const p = this.smallFiles(read).finally(() => {
        this.reads.release();
        this.inflight.delete(p);
      });
      this.inflight.add(p);
      mine.push(p);
    }
    for (const e of rest) {
      this.ledger.check();
      const childAbs = join(abs, e.name);
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.type === 'd') {
        if (!this.ledger.madeDir(childAbs, childRel)) continue;
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

  /** Waits for every file in flight to end, however it ends. */
  async settle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
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

  private async file(e: KopiaDirEntry, abs: string, rel: string): Promise<void> {
    const chunks = e.object ? await this.repo.objects.chunks(e.object, this.options.signal) : [];
    const mode = e.mode & 0o777;
    const sparse = this.options.sparse !== false;
    const size = await writeRestoredFile(abs, mode, async (fd, written) => {
      const pos = await writeObject({
        repo: this.repo,
        pool: this.pool,
        reads: this.pieces,
        chunks,
        fd,
        sparse,
        signal: this.options.signal,
        check: () => this.ledger.check(),
        onBytes: (n) => {
          this.ledger.progress.doneBytes += n;
          this.ledger.reportProgress(false);
        },
      });
      if (pos !== e.size) throw new RepositoryCorruptError(`${rel} restored ${pos} bytes, its directory entry says ${e.size}`);
      // Zero blocks at the end were not written: the size comes from the truncate.
      if (sparse) ftruncateSync(fd, pos);
      this.attributes(written, rel, e, fd, false, (mode & ~this.umask) === e.mode);
      return pos;
    });
    this.ledger.fileDone(size);
  }

  /**
   * Files of one content each (most files of a volume), whose contents lie together in one pack: one read here,
   * then each file created, written, given its attributes and renamed on a content worker. Each failure is reported
   * against its file's path.
   */
  private async smallFiles(read: PackRead<SmallFile>): Promise<void> {
    let bytes: Buffer;
    try {
      bytes = await this.repo.contents.readPackRange(read, read.items[0]!.info.id, this.options.signal);
    } catch (err) {
      for (const f of read.items) this.ledger.report(f.rel, err);
      return;
    }
    await Promise.all(
      read.items.map(async (f) => {
        if (this.ledger.stopped || this.options.signal?.aborted) return;
        const at = f.info.packOffset - read.offset;
        const createMode = f.e.mode & 0o777;
        try {
          const result = await this.pool.writeFile(
            { info: f.info, sealed: bytes.subarray(at, at + f.info.packedLength), objectCompressed: f.e.object!.compressed, expectedLength: directObjectLength(f.e.object!, f.info) },
            {
              tmp: restoreTempPath(f.abs),
              path: f.abs,
              createMode,
              modeIsSet: (createMode & ~this.umask) === f.e.mode,
              ownership: this.options.ownership !== false,
              attributes: recordedAttributes(f.e),
              size: f.e.size,
              sparse: this.options.sparse !== false,
            },
          );
          for (const issue of result.issues) this.ledger.report(f.rel, issue);
          this.ledger.progress.doneBytes += result.written;
          this.ledger.reportProgress(false);
          this.ledger.fileDone(result.written);
        } catch (err) {
          this.ledger.report(f.rel, err);
        }
      }),
    );
  }

  /** Mode, owner and time; each failure is reported with the path. */
  private attributes(abs: string, rel: string, e: KopiaDirEntry, fd: number | undefined, symlink = false, modeIsSet = false): void {
    this.ledger.setAttributes({ abs, rel, fd, symlink, modeIsSet }, recordedAttributes(e));
  }
}

/** Where a small file's content lies in its pack. */
function contentSpan(f: SmallFile): PackSpan {
  return { pack: f.info.packBlobId, offset: f.info.packOffset, length: f.info.packedLength };
}

/** A file of one content, with that content's index entry. */
interface SmallFile {
  e: KopiaDirEntry;
  abs: string;
  rel: string;
  info: ContentInfo;
}

function recordedAttributes(e: KopiaDirEntry): RecordedAttributes {
  // Seconds with microseconds (what a double carries), rounded as cairn's own restore rounds.
  return { uid: e.uid, gid: e.gid, mode: e.mode, mtimeSeconds: (Number(e.mtimeNs / 1000n) + 0.5) / 1e6 };
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
  const pool = new KopiaContentPool(opts.repository.contentWorkerData(), usableCpus());
  let pos: number;
  let done = 0;
  try {
    pos = await writeObject({
      repo: opts.repository,
      pool,
      reads: new Semaphore(AHEAD),
      chunks,
      fd: fh.fd,
      // A device is not known to read back zeros where nothing was written.
      sparse: false,
      signal: opts.signal,
      check: () => opts.signal?.throwIfAborted(),
      onBytes: (n) => {
        done += n;
        opts.onProgress?.({ totalBytes: file.size, doneBytes: done });
      },
    });
    await fh.sync();
  } catch (err) {
    if (opts.signal?.aborted) throw new CancelledError();
    throw err;
  } finally {
    await fh.close();
    await pool.close();
  }
  if (pos !== file.size) throw new RepositoryCorruptError(`block snapshot ${snap.id} restored ${pos} bytes, its entry says ${file.size}`);
  return { bytes: pos, durationMs: Date.now() - started };
}
