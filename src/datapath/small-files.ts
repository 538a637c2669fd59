/**
 * Restore of small files in batches on the worker threads. Per small file the work is a few microseconds of
 * crypto and four syscalls (create, write, times, close); done one file at a time on the main thread, with a
 * promise chain per file, that is where a restore of many small files spent its time. Here the main thread only
 * walks the listings and copies each file's sealed blobs (from the read windows) into a batch slab; a worker opens
 * the blobs (authenticates, decompresses, checks the IDs) and writes the files with synchronous calls, each under its
 * own name when new or through its temp name when it replaces an entry, exactly like the restorer's own path.
 */
import { randomBytes } from 'node:crypto';
import type { OpenPool, SmallFileIssue, SmallFileJob, SmallFileResult } from './open-pool.js';
import { RepositoryCorruptError } from './errors.js';
import { writeId, type BlobId, type PackId } from './ids.js';
import type { PackReader, SealedBlob } from './repository-roles.js';
import { isBundleSlice, utimeSeconds, type ContentItem, type TreeEntry } from './tree.js';

/**
 * Files up to this size (without zero runs or hard links) take the batch path. 4 MiB: a backup packs every file below
 * 4 MiB beside its neighbours (in walk order; larger ones go to a lane of their own, uploader.ts), so restoring all of
 * them through the small-file groups reads those packs front to back in a few large reads. With 1 MiB the files of
 * 1-4 MiB went through the piece reads, and both paths cut the same packs into fragments around each other's bytes:
 * from MinIO a restore of the real-tree set made 220 reads instead of 93 and took 1.06x the time (docs/benchmarks.md).
 */
export const SMALL_FILE_MAX = 4 << 20;
const SLAB_BYTES = 4 << 20;
const BATCH_BYTES = 1 << 20;
const BATCH_FILES = 128;
/** A batch with at least this many files is sent off when the next file is in another directory. */
const DIR_CUT_FILES = 32;
/** Bytes in the slab per blob besides its sealed bytes: the 32-byte ID. */
const ID_BYTES = 32;

export interface SmallFileCallbacks {
  /** A file is complete under its final name. */
  done(rel: string, bytes: number): void;
  /** A file failed (it is not there) or an attribute could not be set (the file is there). */
  issue(rel: string, err: Error & { code?: string }): void;
  /** The pool itself failed: the restore cannot go on. */
  fatal(err: unknown): void;
}

export interface SmallFileOptions {
  repository: PackReader;
  pool: OpenPool;
  /** Restore owners (uid/gid) that differ from this process's. */
  ownership: boolean;
  umask: number;
  signal?: AbortSignal;
  callbacks: SmallFileCallbacks;
}

/** Where add() gets a blob's sealed bytes (default: the repository's readSealed). */
export type SealedSource = (id: BlobId) => Promise<SealedBlob>;

interface FileInfo {
  rel: string;
  /** Blob IDs and packs of the file's pieces, to name them in errors. */
  blobs: { id: BlobId; pack: PackId }[];
}

interface Batch {
  slab: Buffer;
  used: number;
  jobs: SmallFileJob[];
  infos: FileInfo[];
  /** Directories the batch writes into, in order. */
  dirs: string[];
  bytes: number;
  /** Bundle blobs already in the slab, by ID: where, and what a file's piece needs to name them. */
  bundles: Map<BlobId, { at: number; length: number; flags: number; rawLength: number; pack: PackId }>;
  done: Promise<void>;
  resolve: () => void;
}

export class SmallFileRestorer {
  private current: Batch | undefined;
  private readonly inflight = new Set<Promise<void>>();
  private readonly freeSlabs: ArrayBuffer[] = [];
  private readonly maxInFlight: number;
  private readonly uid = process.getuid?.();
  private readonly gid = process.getgid?.();
  /** Temp names: a random per-restore prefix and a counter (O_EXCL catches any clash). */
  private readonly tmpTag = randomBytes(4).toString('hex');
  private counter = 0;

  constructor(private readonly options: SmallFileOptions) {
    this.maxInFlight = options.pool.size * 2;
  }

  /** Whether an entry can take this path. */
  static eligible(e: TreeEntry): boolean {
    if (e.t !== 'f' || e.hl !== undefined || e.nl !== undefined) return false;
    if (e.in !== undefined) return true;
    if ((e.s ?? 0) > SMALL_FILE_MAX) return false;
    for (const item of e.c ?? []) if (typeof item !== 'string' && !isBundleSlice(item)) return false;
    return true;
  }

  /**
   * Queues a file; resolves (once its bytes are in a batch) to the promise of that batch's completion (wrapped: an
   * async function would otherwise wait for it). A blob that cannot be found or read is reported for the file, which
   * is then left out. `source` gives the blobs' sealed bytes (small-file-groups.ts reads them ahead).
   */
  async add(e: TreeEntry, dirAbs: string, rel: string, source?: SealedSource): Promise<{ batch: Promise<void> } | undefined> {
    const read = source ?? ((hex: BlobId) => this.options.repository.readSealed(hex, this.options.signal ? { signal: this.options.signal } : {}));
    const parts: number[] = [];
    const infos: FileInfo['blobs'] = [];
    // A batch of a fair size ends where a directory does, so that batches of different directories can go to
    // different workers (see OpenPool.restoreFiles); small directories still share batches.
    const open = this.current;
    if (open && open.jobs.length >= DIR_CUT_FILES && open.dirs[open.dirs.length - 1] !== dirAbs) this.dispatch();
    let batch: Batch;
    if (e.in !== undefined) {
      const data = Buffer.from(e.in, 'base64');
      batch = await this.batchWithRoom(data.length);
      parts.push(batch.used, data.length, -1, data.length, -1, 0);
      data.copy(batch.slab, batch.used);
      batch.used += data.length;
      batch.bytes += data.length;
    } else {
      // All pieces land in one batch. Their sizes come from the index; each piece is copied into the slab right
      // after it is read (a read window's buffer is reused once its readers have moved on).
      const items = e.c ?? [];
      const hexOf = (item: ContentItem) => (isBundleSlice(item) ? item.b : (item as BlobId));
      // Room for every piece, or, in the open batch, for the pieces whose bundle it does not hold yet.
      let need = 0;
      let needHere = 0;
      for (const item of items) {
        const bytes = ID_BYTES + (this.options.repository.index.get(hexOf(item))?.length ?? 0);
        need += bytes;
        if (!isBundleSlice(item) || !this.current?.bundles.has(item.b)) needHere += bytes;
      }
      const current = this.current;
      batch = current && current.used + needHere <= current.slab.length ? current : await this.batchWithRoom(need);
      const from = batch.used;
      const added: BlobId[] = [];
      try {
        for (const item of items) {
          const hex = hexOf(item);
          const slice = isBundleSlice(item) ? item : undefined;
          const known = slice ? batch.bundles.get(hex) : undefined;
          if (known) {
            parts.push(known.at, known.length, known.flags, known.rawLength, slice!.o, slice!.l);
            infos.push({ id: hex, pack: known.pack });
            continue;
          }
          const { sealed, loc, pack } = await read(hex);
          if (batch.used + ID_BYTES + sealed.length > batch.slab.length) throw new RepositoryCorruptError(`blob ${hex.slice(0, 16)} is larger than its index entry says`);
          parts.push(batch.used, sealed.length, loc.flags, loc.rawLength, slice ? slice.o : -1, slice ? slice.l : 0);
          if (slice) {
            batch.bundles.set(hex, { at: batch.used, length: sealed.length, flags: loc.flags, rawLength: loc.rawLength, pack });
            added.push(hex);
          }
          writeId(hex, batch.slab, batch.used);
          sealed.copy(batch.slab, batch.used + ID_BYTES);
          batch.used += ID_BYTES + sealed.length;
          infos.push({ id: hex, pack });
        }
      } catch (err) {
        // Nothing of this file stays in the batch.
        batch.used = from;
        for (const hex of added) batch.bundles.delete(hex);
        this.options.callbacks.issue(rel, err as Error);
        return undefined;
      }
      // Bytes the file has: a whole blob's raw length, or a slice's length.
      for (let k = 0; k < parts.length; k += 6) batch.bytes += parts[k + 4]! >= 0 ? parts[k + 5]! : parts[k + 3]!;
    }
    const wantOwner = this.options.ownership && (e.u !== this.uid || e.g !== this.gid);
    const modeIsSet = (e.m & 0o777 & ~this.options.umask) === e.m;
    batch.jobs.push({
      tmp: `${dirAbs}/.${e.n}.${this.tmpTag}${(this.counter++).toString(36)}.cairn-restore`,
      path: `${dirAbs}/${e.n}`,
      mode: e.m,
      // chown clears setuid/setgid: the mode is set again after it.
      chmod: !(modeIsSet && !wantOwner),
      chown: wantOwner,
      uid: e.u,
      gid: e.g,
      mtime: utimeSeconds(e.mt),
      parts,
    });
    batch.infos.push({ rel, blobs: infos });
    if (batch.dirs[batch.dirs.length - 1] !== dirAbs) batch.dirs.push(dirAbs);
    const done = batch.done;
    if (batch.jobs.length >= BATCH_FILES || batch.bytes >= BATCH_BYTES) this.dispatch();
    return { batch: done };
  }

  /** The open batch when it has `need` more bytes of room, else a new one (sending the full one off first). */
  private async batchWithRoom(need: number): Promise<Batch> {
    if (this.current && this.current.used + need <= this.current.slab.length) return this.current;
    this.dispatch();
    while (this.inflight.size >= this.maxInFlight) await Promise.race(this.inflight);
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const size = Math.max(SLAB_BYTES, need);
    const buffer = (size === SLAB_BYTES ? this.freeSlabs.pop() : undefined) ?? new ArrayBuffer(size);
    this.current = { slab: Buffer.from(buffer), used: 0, jobs: [], infos: [], dirs: [], bytes: 0, bundles: new Map(), done, resolve };
    return this.current;
  }

  /** Sends the open batch to a worker. */
  dispatch(): void {
    const batch = this.current;
    this.current = undefined;
    if (!batch) return;
    if (batch.jobs.length === 0) {
      batch.resolve();
      if (batch.slab.buffer.byteLength === SLAB_BYTES) this.freeSlabs.push(batch.slab.buffer as ArrayBuffer);
      return;
    }
    const task = this.options.pool
      .restoreFiles(batch.slab.buffer as ArrayBuffer, batch.jobs, batch.dirs)
      .then(({ results, slab }) => {
        if (slab.byteLength === SLAB_BYTES) this.freeSlabs.push(slab);
        this.settle(batch, results);
      })
      .catch((err: unknown) => this.options.callbacks.fatal(err))
      .finally(() => {
        this.inflight.delete(task);
        batch.resolve();
      });
    this.inflight.add(task);
  }

  private settle(batch: Batch, results: SmallFileResult[]): void {
    const cb = this.options.callbacks;
    for (let i = 0; i < results.length; i++) {
      const r = results[i]!;
      const info = batch.infos[i]!;
      for (const issue of r.issues ?? []) cb.issue(info.rel, toError(issue, info));
      if (r.error) cb.issue(info.rel, toError(r.error, info));
      else cb.done(info.rel, r.bytes ?? 0);
    }
  }

  /** Sends the last batch and waits for every batch. */
  async drain(): Promise<void> {
    this.dispatch();
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
  }
}

function toError(issue: SmallFileIssue, info: FileInfo): Error & { code?: string } {
  if (issue.kind === 'blob') {
    const b = info.blobs[issue.blob ?? 0];
    return new RepositoryCorruptError(`blob ${b?.id.slice(0, 16)} in pack ${b?.pack.slice(0, 12)} is corrupted: ${issue.message}`);
  }
  return Object.assign(new Error(issue.message), issue.code ? { code: issue.code } : {});
}
