/**
 * Backup: a streaming depth-first walk (one directory listing in memory per level, never the whole tree) feeding
 * read → chunk → hash → dedup → compress → seal → pack → upload (BlobWriter). Files unchanged since the parent
 * snapshot (size, mtime, ctime, inode) are reused without reading. Large files go to the chunk worker while the walk
 * goes on (listings still come out in name order: ordered-entries.ts); those the listing cache says changed are read
 * before the walk reaches them ("read ahead" below). The snapshot object is written last, so a
 * failed or cancelled backup leaves no snapshot, only unreferenced packs that maintenance removes.
 */
import { closeSync, fstatSync, lstatSync, openSync, read, readdirSync, readlinkSync, readSync, type BigIntStats } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { resolve } from 'node:path';
import { BlobWriter } from './blob-writer.js';
import { ChunkWorker } from './chunk-pool.js';
import { createChunker, type Chunker } from './chunker.js';
import { defaultWorkerCount, usableCpus } from './cpu.js';
import { CancelledError } from './errors.js';
import { BlobType } from './pack.js';
import { hasFeature } from './repository.js';
import type { BlobIndex, BlobLoader, ContentIds, PackWriter, WithLocks, WithSnapshots } from './repository-roles.js';
import type { SnapshotSummary } from './snapshots.js';
import { blobIdOf, type BlobId, type SnapshotId } from './ids.js';
import { OrderedEntries } from './ordered-entries.js';
import { isBundleSlice, isZeroRun, readTree, TreeWriter, type BundleSlice, type ContentItem, type TreeEntry } from './tree.js';
import { tuneHeapForDataPath, type HeapTuning } from './heap-tuning.js';
import { bootSpareWorkers } from './worker-threads.js';
import { isExcluded } from './excludes.js';
import { ScanAhead, type EntryStat, type ScannedDir } from './scan-ahead.js';
import { TreeAhead } from './tree-ahead.js';
import { ProgressCadence } from './progress-cadence.js';
import { entriesSignature, ListingCache, sameIds, type CachedListing, type LargeFileRecord } from './listing-cache.js';

export interface BackupProgress {
  totalBytes: number;
  doneBytes: number;
  totalFiles: number;
  doneFiles: number;
  /** False while the size of the source is still being counted (totals grow). */
  totalsFinal: boolean;
}

export interface BackupIssue {
  path: string;
  reason: string;
}

/**
 * What a backup uses of a repository (repository-roles.ts): new blobs go into packs and index files (PackWriter),
 * named by the content hasher, checked against the index; the parent's listings are read; the snapshot is saved.
 */
export type UploadRepository = PackWriter & ContentIds & BlobIndex & Pick<BlobLoader, 'loadTreeBlob'> & WithSnapshots & WithLocks;

export interface BackupOptions {
  source: string;
  repository: UploadRepository;
  /** Snapshot ID to compare against; undefined = the latest snapshot of the same source; null = none (full read). */
  parent?: string | null;
  tags?: Record<string, string>;
  description?: string;
  /** Glob patterns (path.matchesGlob); a pattern without '/' matches a name at any depth. */
  excludes?: string[];
  /** Fail the backup on the first unreadable or vanished file instead of reporting and going on. */
  failOnUnreadable?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: BackupProgress) => void;
  progressIntervalMs?: number;
  /** Compression jobs in flight when sealing on this thread; default from the cgroup CPU limit. */
  concurrency?: number;
  /** Worker threads that compress and seal; default from the cgroup CPU limit; 0 = none. */
  workers?: number;
  /**
   * cairn's local cache directory: the listing cache (listing-cache.ts) of this source is read from and written to
   * it, so an unchanged directory costs no listing read or write. Undefined: no cache.
   */
  cacheDir?: string;
  /**
   * What this source's listing cache is kept under: its absolute path by default. A data mover sees the same volume
   * at another path in every run, so it names the volume instead.
   */
  cacheKey?: string;
  /**
   * The scan of `source` begun before the repository was opened (startSourceScan), so that its system calls overlap
   * the key derivation. The backup takes it over and stops it when done.
   */
  scan?: ScanAhead;
}

export interface BackupStats extends SnapshotSummary {
  skipped: number;
}

export interface BackupResult {
  snapshotId: SnapshotId;
  parent: SnapshotId | undefined;
  stats: BackupStats;
  /** Files and directories that could not be read (the backup went on without them). */
  errors: BackupIssue[];
  /** Sockets, FIFOs and devices, which are not backed up. */
  skipped: BackupIssue[];
  /** Directories taken whole from the listing cache, without reading or writing their listings. */
  cachedDirs: number;
  /** Large files read ahead of the walk: changed since the parent snapshot, as the listing cache told. */
  readAheadFiles: number;
}

/** Files up to this size are stored inside the directory listing: no blob, no index entry. */
export const INLINE_MAX = 256;
const READ_BLOCK = 1 << 20;
/** Files from this size on are read, chunked and hashed on the chunk worker (when there are worker threads). */
export const WORKER_CHUNK_MIN = 4 << 20;
/** Names walked between two turns of the event loop while a large file is on the chunk worker. */
const YIELD_EVERY = 64;
/** Large files queued for the chunk worker at most, the one it reads included. */
const MAX_QUEUED_LARGE_FILES = 8;
/** Listing entries held behind large files on the worker at most (then the walk waits): ~10 MB. */
const MAX_HELD_ENTRIES = 20_000;

/** Files above INLINE_MAX and up to this size go into bundle blobs with their neighbours instead of a blob each. */
export const BUNDLE_FILE_MAX = 32 * 1024;
/** A bundle is closed once it holds this many bytes (or when a listing ends). */
const BUNDLE_TARGET = 256 * 1024;

class FileError extends Error {}

/** A large file's content as the chunk worker stored it, and the bytes of it that were new to the repository. */
interface ChunkedContent {
  item: Pick<TreeEntry, 'c'>;
  bytes: number;
  newBytes: number;
}

/** A large file read ahead of the walk: the lstat it was read under, and its content (undefined: read it again). */
interface ReadAhead {
  st: EntryStat;
  content: Promise<ChunkedContent | undefined>;
}

/** True when two lstat results describe the same file content (the fields a parent entry is matched on). */
function sameFileState(a: EntryStat, b: EntryStat): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** Small files' bytes gathered into one blob; their entries wait until it is closed and its ID known. */
class Bundle {
  readonly buf = Buffer.allocUnsafe(BUNDLE_TARGET + BUNDLE_FILE_MAX + 1);
  used = 0;
  /** The slices of the open bundle; their `b` stays empty until it is closed. */
  slices: BundleSlice[] = [];
  closed!: Promise<void>;
  resolveClosed!: () => void;
  constructor() {
    this.renew();
  }
  renew(): void {
    this.used = 0;
    this.slices = [];
    this.closed = new Promise((r) => (this.resolveClosed = r));
  }
}

/** True for a file entry whose bytes are in the open bundle: it can be listed only once the bundle has its ID. */
function waitsForBundle(e: TreeEntry): boolean {
  const first = e.c?.[0];
  return first !== undefined && isBundleSlice(first) && first.b === '';
}

/**
 * Boots the worker threads a backup with default settings uses (the seal workers, the chunk worker and the scan
 * worker), to be called before the repository is opened: their start-up then overlaps the key derivation
 * (worker-threads.ts).
 */
export function bootBackupWorkers(): void {
  bootSpareWorkers(defaultWorkerCount() + 2);
}

/**
 * Begins listing and lstat()ing `source` for a backup with these excludes, to be called before the repository is
 * opened: opening waits for the key derivation (scrypt, a few hundred ms on the thread pool) with this thread idle.
 */
export function startSourceScan(source: string, excludes: readonly string[] = []): ScanAhead {
  return new ScanAhead(resolve(source), excludes);
}

export async function backup(options: BackupOptions): Promise<BackupResult> {
  try {
    return await backupWith(options);
  } finally {
    options.scan?.stop();
  }
}

async function backupWith(options: BackupOptions): Promise<BackupResult> {
  const repo = options.repository;
  const started = Date.now();
  const source = resolve(options.source);
  const rootStat = lstatSync(source, { bigint: true });
  if (!rootStat.isDirectory()) throw new Error(`${source} is not a directory`);
  const lock = await repo.locks.lock({ exclusive: false });
  try {
    await repo.loadIndex();
    let parentTree: BlobId[] | undefined;
    let parentId: SnapshotId | undefined;
    if (options.parent !== null) {
      try {
        const parent = await repo.snapshots.find(options.parent ?? 'latest', options.parent ? undefined : source);
        parentTree = parent.tree;
        parentId = parent.id;
      } catch (err) {
        if (options.parent) throw err; // an explicit parent must exist
      }
    }
    const cache = options.cacheDir
      ? ListingCache.open(
          { dir: options.cacheDir, repositoryId: repo.config.id, source: options.cacheKey ?? source, excludes: options.excludes ?? [] },
          parentId && parentTree ? { id: parentId, tree: parentTree } : undefined,
          (id) => repo.index.has(id),
        )
      : undefined;
    const run = new BackupRun(repo, source, options, cache);
    const tree = await run.execute(parentTree);
    const stats: BackupStats = { ...run.stats, durationMs: Date.now() - started };
    let user = 'unknown';
    try {
      user = userInfo().username;
    } catch {
      // no passwd entry
    }
    const snapshotId = await repo.snapshots.save({
      version: 1,
      time: new Date().toISOString(),
      hostname: hostname(),
      username: user,
      source,
      ...(parentId ? { parent: parentId } : {}),
      tags: options.tags ?? {},
      ...(options.description ? { description: options.description } : {}),
      tree,
      summary: stats,
    });
    try {
      cache?.save(snapshotId);
    } catch {
      // A cache that cannot be written only makes the next backup read the parent's listings.
    }
    return { snapshotId, parent: parentId, stats, errors: run.errors, skipped: run.skipped, cachedDirs: run.cachedDirs, readAheadFiles: run.readAheadFiles };
  } finally {
    await lock.release().catch(() => undefined);
  }
}

class BackupRun {
  readonly stats: Omit<BackupStats, 'durationMs'> = {
    files: 0,
    dirs: 0,
    bytes: 0,
    newBytes: 0,
    reusedBytes: 0,
    newFiles: 0,
    unchangedFiles: 0,
    storedBytes: 0,
    errors: 0,
    skipped: 0,
  };
  readonly errors: BackupIssue[] = [];
  readonly skipped: BackupIssue[] = [];
  /** Directories taken whole from the listing cache. */
  cachedDirs = 0;
  /** Large files whose read-ahead content went into the snapshot. */
  readAheadFiles = 0;
  /** Large files being read ahead of the walk, by relative path, until the walk takes them. */
  private readonly readAhead = new Map<string, ReadAhead>();
  private readonly writer: BlobWriter;
  private readonly chunker: Chunker;
  private readonly readBuf: Buffer;
  private zero: Buffer | undefined;
  private readonly useChunkWorker: boolean;
  private chunkWorker: ChunkWorker | undefined;
  private readonly hardlinks = new Map<string, { rel: string; item: Pick<TreeEntry, 'c' | 'in' | 's'> }>();
  private readonly progress: BackupProgress = { totalBytes: 0, doneBytes: 0, totalFiles: 0, doneFiles: 0, totalsFinal: false };
  private readonly cadence: ProgressCadence;
  /** Large files queued for the chunk worker, oldest first, as promises that settle when each is done (never reject). */
  private readonly chunkJobs: Promise<void>[] = [];
  private stopping = false;
  /** Entries of all listings waiting behind an entry not known yet (ordered-entries.ts). */
  private readonly held = { count: 0 };
  private chunkJobFailure: { error: unknown } | undefined;
  private heapTuning: HeapTuning | undefined;
  /** The open bundle of small files, when the repository takes bundles. */
  private readonly bundle: Bundle | undefined;
  /** readdir and lstat of the next directories on the thread pool (scan-ahead.ts). */
  private scanAhead: ScanAhead | undefined;
  /** The parent snapshot's listings, read ahead of the walk (tree-ahead.ts). */
  private treeAhead: TreeAhead | undefined;
  /** Directories (relative paths) where something was reported: the listing cache records them unsigned. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly repo: UploadRepository,
    private readonly source: string,
    private readonly options: BackupOptions,
    /** The listing cache (listing-cache.ts), when the backup has a cache directory. */
    private readonly cache?: ListingCache,
  ) {
    const cpus = usableCpus();
    this.writer = new BlobWriter(repo, { concurrency: options.concurrency ?? Math.max(2, cpus * 2), maxUploads: 4, ...(options.workers !== undefined ? { workers: options.workers } : {}), ...(options.signal ? { signal: options.signal } : {}) });
    this.chunker = createChunker(repo.config.chunker);
    this.readBuf = Buffer.allocUnsafe(repo.config.chunker.max + READ_BLOCK);
    this.useChunkWorker = (options.workers ?? defaultWorkerCount()) > 0;
    this.bundle = hasFeature(repo.config, 'bundles') ? new Bundle() : undefined;
    this.cadence = new ProgressCadence(options.progressIntervalMs);
  }

  async execute(parentTree: BlobId[] | undefined): Promise<BlobId[]> {
    const scan = this.options.onProgress ? this.countTotals() : undefined;
    const heapTuning = tuneHeapForDataPath();
    this.heapTuning = heapTuning;
    // A scan begun for another path would only be dropped by the walk. (One with other excludes is still right: what
    // it left out, the walk lists and lstats itself.) Without worker threads the walk does all of that itself.
    if (this.options.scan?.root === this.source) this.scanAhead = this.options.scan;
    else if (this.useChunkWorker) this.scanAhead = new ScanAhead(this.source, this.options.excludes ?? []);
    // With a cache of the parent, only changed directories' listings are read: none are read ahead.
    if (parentTree && !this.cache?.usable) this.treeAhead = new TreeAhead(parentTree, (id) => this.repo.loadTreeBlob(id));
    try {
      if (this.cache?.usable && this.useChunkWorker) await this.startReadAhead(this.cache);
      const { listing } = await this.dir(this.source, '', parentTree);
      const tree = await listing;
      // A file read ahead that the walk did not take (it changed kind or links meanwhile) may still be adding blobs.
      await Promise.all([...this.readAhead.values()].map((a) => a.content));
      await this.writer.flush();
      this.stats.storedBytes = this.writer.stats.storedBytes;
      await scan;
      this.reportProgress(true);
      return tree;
    } catch (err) {
      // A large file may still be on the chunk worker, adding blobs: let it stop before the writer goes.
      this.stopping = true;
      await Promise.all(this.chunkJobs);
      await this.writer.abandon();
      if (this.options.signal?.aborted) throw new CancelledError();
      throw err;
    } finally {
      this.scanAhead?.stop();
      this.treeAhead?.stop();
      heapTuning.release();
      await this.chunkWorker?.close();
    }
  }

  private excluded(rel: string, name: string): boolean {
    return isExcluded(this.options.excludes ?? [], rel, name);
  }

  private report(rel: string, err: unknown): void {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'vanished during backup' : errnoReason(err);
    if (this.options.failOnUnreadable) throw new FileError(`${rel || '.'}: ${reason}`);
    this.reported.add(parentOf(rel));
    this.errors.push({ path: rel || '.', reason });
    this.stats.errors++;
  }

  private async parentEntries(sub: BlobId[] | undefined): Promise<Map<string, TreeEntry> | undefined> {
    if (!sub) return undefined;
    const ahead = await this.treeAhead?.take(sub);
    if (ahead) return ahead;
    const map = new Map<string, TreeEntry>();
    for await (const e of readTree(sub, (id) => this.repo.loadTreeBlob(id))) map.set(e.n, e);
    return map;
  }

  /**
   * Walks a directory. Returns once every name in it (and below) has been visited; `listing` settles with the
   * listing's tree blob IDs once its entries are all known, which for a large file on the chunk worker can be later.
   */
  private async dir(abs: string, rel: string, parentSub: BlobId[] | undefined): Promise<{ listing: Promise<BlobId[]> }> {
    this.options.signal?.throwIfAborted();
    const ahead = this.scanAhead?.take(abs);
    const cached = this.cache?.get(rel);
    // With the cache, the parent's listing is read only once the directory is known to have changed.
    const parentLoad = this.cache?.usable ? undefined : this.parentEntries(parentSub);
    // Awaited below; a corrupt parent listing must not count as an unhandled rejection meanwhile.
    parentLoad?.catch(() => undefined);
    const scanned: ScannedDir | undefined = ahead ? await ahead : undefined;
    let names: string[];
    if (scanned?.names) {
      names = scanned.names;
    } else {
      try {
        names = readdirSync(abs);
      } catch (err) {
        if (rel === '') throw err;
        this.report(rel, err);
        this.reported.add(rel);
        names = [];
      }
      names.sort();
    }
    const stats = scanned?.names ? scanned.stats : undefined;
    let walked: Map<string, Promise<BlobId[]>> | undefined;
    if (cached?.sig && stats) {
      const shortcut = await this.unchangedDir(abs, rel, names, stats, cached);
      if (shortcut.sub) return { listing: Promise.resolve(shortcut.sub) };
      walked = shortcut.subdirs;
    }
    const parent = await (parentLoad ?? this.parentEntries(parentSub));
    const entries = new OrderedEntries(
      this.held,
      new TreeWriter(async (data) => {
        const id = this.repo.hasher.id(data);
        const hex = blobIdOf(id);
        await this.writer.add(BlobType.Tree, id, hex, data);
        return hex;
      }),
    );
    // What the listing cache signs: the names walked and their lstat; and the large files it lists for reading ahead.
    const signed: { names: string[]; stats: EntryStat[] } | undefined = this.cache ? { names: [], stats: [] } : undefined;
    const large: LargeFileRecord[] | undefined = this.cache ? [] : undefined;
    let sinceYield = 0;
    for (let index = 0; index < names.length; index++) {
      const name = names[index]!;
      if (this.chunkJobFailure) throw this.chunkJobFailure.error;
      // Entries held behind a large file still on the worker are bounded: past the limit, wait for the oldest one.
      while (this.held.count > MAX_HELD_ENTRIES && this.chunkJobs.length > 0) await this.chunkJobs[0];
      // The walk rarely waits on anything (sync reads; unchanged files need no I/O at all): while a large file is on
      // the chunk worker, turn the event loop now and then so its segments are taken in and it keeps reading.
      if (this.chunkJobs.length > 0 && ++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
      const childRel = rel ? `${rel}/${name}` : name;
      if (this.excluded(childRel, name)) continue;
      if (name.includes('\uFFFD')) {
        this.report(childRel, new Error('file name is not valid UTF-8; skipped'));
        continue;
      }
      const childAbs = `${abs}/${name}`;
      let st: EntryStat;
      try {
        st = stats?.[index] ?? lstatSync(childAbs, { bigint: true });
      } catch (err) {
        this.report(childRel, err);
        continue;
      }
      signed?.names.push(name);
      signed?.stats.push(st);
      const base = { n: name, m: Number(st.mode & 0o7777n), u: Number(st.uid), g: Number(st.gid), mt: st.mtimeNs.toString() };
      const prev = parent?.get(name);
      if (st.isDirectory()) {
        const listing = walked?.get(name) ?? (await this.dir(childAbs, childRel, prev?.t === 'd' ? prev.sub : undefined)).listing;
        // Only while large files are on the worker may the walk run ahead of a listing; otherwise it waits here, as
        // it must: a listing's blobs wait for uploads, and a walk that never waited would hold ever more listings.
        if (this.chunkJobs.length === 0) entries.add({ ...base, t: 'd', sub: await listing });
        else entries.addLater(listing.then((sub): TreeEntry => ({ ...base, t: 'd', sub })));
        this.stats.dirs++;
      } else if (st.isSymbolicLink()) {
        try {
          entries.add({ ...base, t: 'l', tg: readlinkSync(childAbs) });
          this.stats.files++;
        } catch (err) {
          this.report(childRel, err);
        }
      } else if (st.isFile()) {
        // Another name may be stored before or after this one: such a directory is never taken from the cache.
        if (st.nlink > 1n) this.reported.add(rel);
        else if (large && st.size >= BigInt(WORKER_CHUNK_MIN)) large.push([name, st.size.toString(), base.mt, st.ctimeNs.toString(), st.ino.toString()]);
        const toWorker = this.goesToChunkWorker(st, base.mt, prev);
        const ahead = toWorker ? this.takeReadAhead(childRel, st) : undefined;
        if (ahead) {
          // Read ahead (startReadAhead); when that came to nothing, queued like any other large file.
          entries.addLater(
            ahead.then(async (content) =>
              content ? this.file(childAbs, childRel, st, base, prev, content) : (await this.queueChunkJob(() => this.file(childAbs, childRel, st, base, prev))).entry,
            ),
          );
        } else if (toWorker) {
          // Queued for the worker (one file at a time there); the walk goes on meanwhile, except for a hard-linked
          // file, whose content its other names need.
          const { entry } = await this.queueChunkJob(() => this.file(childAbs, childRel, st, base, prev));
          if (st.nlink > 1n) entries.add(await entry);
          else entries.addLater(entry);
        } else {
          const e = await this.file(childAbs, childRel, st, base, prev);
          if (e && this.bundle && waitsForBundle(e)) {
            entries.addLater(this.bundle.closed.then(() => e));
          } else {
            entries.add(e);
          }
        }
      } else {
        const kind = st.isSocket() ? 'socket' : st.isFIFO() ? 'FIFO' : 'device';
        this.skipped.push({ path: childRel, reason: `${kind} not backed up` });
        this.reported.add(rel);
        this.stats.skipped++;
      }
    }
    await this.closeBundle();
    let listing = entries.finish();
    if (signed) {
      // Signed now, so the lstat results are not held until the listing is stored.
      const sig = entriesSignature(signed.names, signed.stats);
      listing = listing.then((sub) => {
        // Reports land before the listing is complete (a large file's come from its chunk job, which it waits for).
        this.cache!.record(rel, this.reported.has(rel) ? '' : sig, sub, large);
        return sub;
      });
    }
    // Failures surface where the listing is awaited (the parent's finish, or execute for the root).
    listing.catch(() => undefined);
    return { listing };
  }

  /**
   * The listing cache's shortcut: when the directory's entries lstat as they did when its cached listing was
   * stored, only its subdirectories are walked, and when they all come out as their cached listings, so does this
   * one: nothing is read, built or written for it. Otherwise (or when in doubt) it returns what it walked, and dir()
   * builds the listing as usual, from the parent's listing, without walking those subdirectories again.
   */
  private async unchangedDir(
    abs: string,
    rel: string,
    names: readonly string[],
    stats: readonly (EntryStat | undefined)[],
    cached: CachedListing,
  ): Promise<{ sub?: BlobId[]; subdirs: Map<string, Promise<BlobId[]>> }> {
    const subdirs = new Map<string, Promise<BlobId[]>>();
    const signed: { names: string[]; stats: EntryStat[] } = { names: [], stats: [] };
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      if (this.excluded(rel ? `${rel}/${name}` : name, name)) continue;
      const st = stats[i];
      // Whatever the full walk would report or treat apart, it does itself.
      if (!st || name.includes('\uFFFD') || !(st.isDirectory() || st.isSymbolicLink() || st.isFile()) || (st.isFile() && st.nlink > 1n)) return { subdirs };
      signed.names.push(name);
      signed.stats.push(st);
    }
    if (entriesSignature(signed.names, signed.stats) !== cached.sig) return { subdirs };
    const walked: Promise<boolean>[] = [];
    for (let i = 0; i < signed.names.length; i++) {
      if (!signed.stats[i]!.isDirectory()) continue;
      const name = signed.names[i]!;
      const childRel = rel ? `${rel}/${name}` : name;
      const before = this.cache!.get(childRel);
      const { listing } = await this.dir(`${abs}/${name}`, childRel, before?.sub);
      subdirs.set(name, listing);
      walked.push(listing.then((sub) => before !== undefined && sameIds(sub, before.sub)));
    }
    if (!(await Promise.all(walked)).every(Boolean)) return { subdirs };
    for (const st of signed.stats) {
      if (st.isDirectory()) this.stats.dirs++;
      else if (st.isSymbolicLink()) this.stats.files++;
      else this.countUnchangedFile(Number(st.size));
    }
    this.cache!.record(rel, cached.sig, cached.sub, cached.large);
    this.cachedDirs++;
    return { sub: cached.sub, subdirs };
  }

  /**
   * True for a file whose content the chunk worker will read: large, changed, and not a later name of a hard-linked
   * file already stored. Every such file goes through the queue: the worker reads one file at a time.
   */
  private goesToChunkWorker(st: EntryStat, mt: string, prev: TreeEntry | undefined): boolean {
    if (!this.useChunkWorker || st.size < BigInt(WORKER_CHUNK_MIN) || unchangedSince(prev, st, mt)) return false;
    return st.nlink === 1n || !this.hardlinks.has(`${st.dev}:${st.ino}`);
  }

  /**
   * Runs `job` once the large files queued before it are done. Waits while MAX_QUEUED_LARGE_FILES are queued, so a
   * directory of many large files does not hold them all.
   */
  private async queueChunkJob<T>(job: () => Promise<T>): Promise<{ entry: Promise<T | undefined> }> {
    while (this.chunkJobs.length >= MAX_QUEUED_LARGE_FILES) await this.chunkJobs[0];
    // After a failure elsewhere the walk has stopped: files still queued are not read.
    const entry = (this.chunkJobs.at(-1) ?? Promise.resolve()).then(() => (this.stopping ? undefined : job()));
    const settled = entry.then(
      () => undefined,
      (error: unknown) => {
        // Also reaches the listing; noted here so the walk stops at once instead of reading on to the listing's end.
        this.chunkJobFailure ??= { error };
      },
    );
    // Jobs run one after another, so they settle in queue order.
    this.chunkJobs.push(settled.then(() => void this.chunkJobs.shift()));
    return { entry };
  }

  /** The entry of a file, reading its content unless it is unchanged, or `readAhead` already holds it. */
  private async file(abs: string, rel: string, st: EntryStat, base: Omit<TreeEntry, 't'>, prev: TreeEntry | undefined, readAhead?: ChunkedContent): Promise<TreeEntry | undefined> {
    const size = Number(st.size);
    const ct = st.ctimeNs.toString();
    const ino = st.ino.toString();
    const entry: TreeEntry = { ...base, t: 'f', ct, i: ino, s: size };
    const linkKey = st.nlink > 1n ? `${st.dev}:${st.ino}` : undefined;
    if (linkKey) entry.nl = Number(st.nlink);
    const first = linkKey ? this.hardlinks.get(linkKey) : undefined;
    this.stats.files++;
    this.progress.doneFiles++;
    if ((this.progress.doneFiles & 1023) === 0) this.heapTuning?.check();
    if (first) {
      // Another name of a file already stored in this snapshot: same content, no reading.
      Object.assign(entry, first.item, { hl: first.rel });
      this.stats.unchangedFiles++;
      this.stats.bytes += entry.s ?? 0;
      return entry;
    }
    if (unchangedSince(prev, st, entry.mt)) {
      if (prev.in !== undefined) entry.in = prev.in;
      if (prev.c) entry.c = prev.c;
      this.stats.unchangedFiles++;
      this.stats.reusedBytes += size;
      this.stats.bytes += size;
      this.progress.doneBytes += size;
    } else {
      let content;
      try {
        if (readAhead) {
          this.stats.newBytes += readAhead.newBytes;
          this.readAheadFiles++;
          content = readAhead;
        } else {
          content = this.bundle && size > INLINE_MAX && size <= BUNDLE_FILE_MAX && !linkKey ? await this.readIntoBundle(this.bundle, abs, size) : await this.readContent(abs, size);
        }
      } catch (err) {
        if (err instanceof FileError || this.options.signal?.aborted || !(err as NodeJS.ErrnoException).code) throw err;
        this.stats.files--;
        this.report(rel, err);
        return undefined;
      }
      Object.assign(entry, content.item);
      entry.s = content.bytes;
      this.stats.newFiles++;
      this.stats.bytes += content.bytes;
    }
    if (linkKey) this.hardlinks.set(linkKey, { rel, item: { ...(entry.c ? { c: entry.c } : {}), ...(entry.in !== undefined ? { in: entry.in } : {}), s: entry.s! } });
    this.reportProgress(false);
    return entry;
  }

  /** Counts a file the listing cache vouches for, as file() counts an unchanged one. */
  private countUnchangedFile(size: number): void {
    this.stats.files++;
    this.progress.doneFiles++;
    if ((this.progress.doneFiles & 1023) === 0) this.heapTuning?.check();
    this.stats.unchangedFiles++;
    this.stats.reusedBytes += size;
    this.stats.bytes += size;
    this.progress.doneBytes += size;
    this.reportProgress(false);
  }

  /** Reads a small file into the open bundle; its entry waits for the bundle (see dir()). */
  private async readIntoBundle(b: Bundle, abs: string, size: number): Promise<{ item: Pick<TreeEntry, 'c' | 'in'>; bytes: number }> {
    if (b.used > 0 && b.used + size > BUNDLE_TARGET) await this.closeBundle();
    const fd = openSync(abs, 'r');
    try {
      const n = readSync(fd, b.buf, b.used, size + 1, 0);
      if (n !== size) {
        // It changed since lstat: chunk it on its own, from the bytes read so far.
        b.buf.copy(this.readBuf, 0, b.used, b.used + n);
        return await this.chunkFile(fd, n, Math.max(n, size));
      }
      const slice: BundleSlice = { b: '' as BlobId, o: b.used, l: n }; // named when the bundle closes
      b.used += n;
      b.slices.push(slice);
      this.progress.doneBytes += n;
      return { item: { c: [slice] }, bytes: n };
    } finally {
      closeSync(fd);
    }
  }

  /** Stores the open bundle as one blob and lets the entries that wait on it go. */
  private async closeBundle(): Promise<void> {
    const b = this.bundle;
    if (!b || b.used === 0) return;
    const data = b.buf.subarray(0, b.used);
    const id = this.repo.hasher.id(data);
    const hex = blobIdOf(id);
    for (const s of b.slices) s.b = hex;
    const resolve = b.resolveClosed;
    try {
      if (await this.writer.add(BlobType.Data, id, hex, data)) this.stats.newBytes += data.length;
    } finally {
      b.renew();
      resolve();
    }
  }

  private isZero(chunk: Buffer): boolean {
    if (chunk[0] !== 0 || chunk[chunk.length - 1] !== 0) return false;
    this.zero ??= Buffer.alloc(this.repo.config.chunker.max);
    return chunk.equals(this.zero.subarray(0, chunk.length));
  }

  private async readContent(abs: string, size: number): Promise<{ item: Pick<TreeEntry, 'c' | 'in'>; bytes: number }> {
    const fd = openSync(abs, 'r');
    try {
      const buf = this.readBuf;
      if (size <= INLINE_MAX) {
        const n = readSync(fd, buf, 0, INLINE_MAX + 1, null);
        if (n <= INLINE_MAX) {
          this.progress.doneBytes += n;
          return { item: { in: buf.subarray(0, n).toString('base64') }, bytes: n };
        }
        // It grew since lstat: fall through and chunk it from the start.
        return await this.chunkFile(fd, n, size);
      }
      if (size >= WORKER_CHUNK_MIN && this.useChunkWorker) {
        const chunked = await this.chunkOnWorker(fd);
        this.stats.newBytes += chunked.newBytes;
        return chunked;
      }
      return await this.chunkFile(fd, 0, size);
    } finally {
      closeSync(fd);
    }
  }

  /** Chunks a large file on the chunk worker: this thread only drops zero runs, dedups and queues the chunks. */
  private async chunkOnWorker(fd: number): Promise<ChunkedContent> {
    this.chunkWorker ??= new ChunkWorker({ chunker: this.repo.config.chunker, idKey: this.repo.keys.id });
    const content: ContentItem[] = [];
    let newBytes = 0;
    const bytes = await this.chunkWorker.chunkFile(fd, 0, async ({ data, id }) => {
      // The walk failed elsewhere: stop reading this file (the backup is being abandoned).
      if (this.stopping) throw new CancelledError();
      if (this.isZero(data)) {
        const last = content[content.length - 1];
        if (isZeroRun(last)) last.z += data.length;
        else content.push({ z: data.length });
      } else {
        const hex = blobIdOf(id);
        content.push(hex);
        // Packed apart from the small files' bundles, so the file's chunks lie side by side (blob-writer.ts PackLane).
        if (await this.writer.add(BlobType.Data, id, hex, data, 'file')) newBytes += data.length;
      }
      this.progress.doneBytes += data.length;
      this.reportProgress(false);
    });
    return { item: { c: content }, bytes, newBytes };
  }

  /**
   * Read ahead: the parent snapshot's large files (the listing cache lists them) that changed since go to the chunk
   * worker before the walk starts, as many as its queue holds. A real change often ends in a large file late in the
   * walk (a database, rotated logs); the worker used to start on it only when the walk got there, and the backup's
   * end then waited on one thread chunking it while the other cores idled. Read ahead, it is chunked while the walk
   * goes through the rest. The walk takes the content only for a file that still lstats as it did when it was read
   * (takeReadAhead); otherwise, and when reading ahead failed, it reads the file itself as usual, so the snapshot is
   * the same either way.
   */
  private async startReadAhead(cache: ListingCache): Promise<void> {
    for (const f of cache.largeFiles()) {
      if (this.readAhead.size >= MAX_QUEUED_LARGE_FILES) break;
      const abs = `${this.source}/${f.rel}`;
      let st: BigIntStats;
      try {
        // Every directory on the way must still be one: lstat follows symlinks in the middle of a path, the walk does not.
        if (!directoriesAllTheWay(this.source, f.rel)) continue;
        st = lstatSync(abs, { bigint: true });
      } catch {
        continue; // gone: the walk will not find it either
      }
      const unchanged = st.size === f.size && st.mtimeNs === f.mtimeNs && st.ctimeNs === f.ctimeNs && st.ino === f.ino;
      if (unchanged || !st.isFile() || st.nlink !== 1n || st.size < BigInt(WORKER_CHUNK_MIN)) continue;
      const { entry } = await this.queueChunkJob(() => this.readAheadFile(abs, st));
      this.readAhead.set(f.rel, { st, content: entry });
    }
  }

  /** Chunks a file read ahead; undefined when it is not the file lstat saw or reading it failed (never rejects). */
  private async readAheadFile(abs: string, st: EntryStat): Promise<ChunkedContent | undefined> {
    let fd: number;
    try {
      fd = openSync(abs, 'r');
    } catch {
      return undefined;
    }
    try {
      if (!sameFileState(fstatSync(fd, { bigint: true }), st)) return undefined;
      return await this.chunkOnWorker(fd);
    } catch {
      return undefined; // the walk reads the file itself, and reports there what fails
    } finally {
      closeSync(fd);
    }
  }

  /** The read-ahead content of the file at `rel`, when it was read in the state the walk sees (`st`). */
  private takeReadAhead(rel: string, st: EntryStat): Promise<ChunkedContent | undefined> | undefined {
    const ahead = this.readAhead.get(rel);
    if (!ahead) return undefined;
    this.readAhead.delete(rel);
    return sameFileState(ahead.st, st) ? ahead.content : undefined;
  }

  /**
   * Chunks a file; `have` bytes are already at the start of the read buffer. Files larger than a read block are read
   * ahead asynchronously: the next block is in flight (into the free tail of the buffer) while the data before it is
   * chunked, hashed and queued, so disk waits overlap the CPU work. Smaller files are read synchronously (one call).
   */
  private async chunkFile(fd: number, have: number, size: number): Promise<{ item: Pick<TreeEntry, 'c'>; bytes: number }> {
    const buf = this.readBuf;
    const max = this.repo.config.chunker.max;
    const overlap = size > READ_BLOCK;
    // Only about two average chunks are kept buffered, not `max` bytes: far fewer bytes to move to the front of the
    // buffer. When no cut point shows up in what is buffered, more is read and the chunker looks again; a cut it finds
    // before the end of the buffered bytes is the one it finds with `max` bytes in view (cuts depend only on the bytes
    // before them and on the distance from the chunk start).
    const lookahead = Math.min(max, 2 * this.repo.config.chunker.avg);
    let want = lookahead;
    const content: ContentItem[] = [];
    let start = 0;
    let end = have;
    let filePos = have;
    let eof = false;
    let total = 0;
    let inflight: Promise<number> | undefined;
    const makeRoom = () => {
      if (start > 0 && buf.length - end < READ_BLOCK) {
        buf.copyWithin(0, start, end);
        end -= start;
        start = 0;
      }
    };
    const issue = () => {
      makeRoom();
      const at = end;
      inflight = new Promise<number>((resolve, reject) => read(fd, buf, at, Math.min(buf.length - at, 2 * READ_BLOCK), filePos, (err, n) => (err ? reject(err) : resolve(n))));
    };
    try {
      for (;;) {
        while (!eof && end - start < want) {
          let n: number;
          if (overlap) {
            if (!inflight) issue();
            n = await inflight!;
            inflight = undefined;
          } else {
            makeRoom();
            n = readSync(fd, buf, end, buf.length - end, filePos);
          }
          if (n === 0) eof = true;
          end += n;
          filePos += n;
        }
        if (overlap && !eof && !inflight && end - start < lookahead + READ_BLOCK) issue();
        if (end === start) break;
        const len = this.chunker.next(buf, start, end);
        if (!eof && len === end - start && len < max) {
          // No cut point in what is buffered: buffer more and look again (see `lookahead` above).
          want = Math.min(max, 2 * (end - start));
          continue;
        }
        want = lookahead;
        const chunk = buf.subarray(start, start + len);
        if (this.isZero(chunk)) {
          const last = content[content.length - 1];
          if (isZeroRun(last)) last.z += len;
          else content.push({ z: len });
        } else {
          const id = this.repo.hasher.id(chunk);
          const hex = blobIdOf(id);
          content.push(hex);
          if (await this.writer.add(BlobType.Data, id, hex, chunk)) this.stats.newBytes += len;
        }
        start += len;
        total += len;
        this.progress.doneBytes += len;
        this.reportProgress(false);
      }
    } finally {
      // Never close the descriptor under a read still in flight.
      if (inflight) await inflight.catch(() => 0);
    }
    return { item: { c: content }, bytes: total };
  }

  private reportProgress(force: boolean): void {
    const cb = this.options.onProgress;
    if (!cb) return;
    if (!this.cadence.due(force)) return;
    const p = this.progress;
    cb({ ...p, totalBytes: Math.max(p.totalBytes, p.doneBytes), totalFiles: Math.max(p.totalFiles, p.doneFiles), totalsFinal: force || p.totalsFinal });
  }

  /** Counts files and bytes ahead of the backup, in small slices between the backup's own work. */
  private async countTotals(): Promise<void> {
    const stack = [this.source];
    let budget = 0;
    while (stack.length > 0) {
      if (this.options.signal?.aborted) return;
      const dir = stack.pop()!;
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        try {
          const st = lstatSync(`${dir}/${name}`);
          if (st.isDirectory()) stack.push(`${dir}/${name}`);
          else if (st.isFile()) {
            this.progress.totalFiles++;
            this.progress.totalBytes += st.size;
          }
        } catch {
          // vanished: the backup itself reports it
        }
        if (++budget % 500 === 0) await new Promise((r) => setImmediate(r));
      }
    }
    this.progress.totalsFinal = true;
  }
}

/** True when the parent snapshot's entry describes this very file content (size, mtime, ctime and inode match). */
function unchangedSince(prev: TreeEntry | undefined, st: EntryStat, mt: string): prev is TreeEntry {
  return !!prev && prev.t === 'f' && !prev.hl && prev.s === Number(st.size) && prev.mt === mt && prev.ct === st.ctimeNs.toString() && prev.i === st.ino.toString();
}

/** True when every directory on the way from `source` to `rel` is a directory, not a symlink to one. */
function directoriesAllTheWay(source: string, rel: string): boolean {
  const parts = rel.split('/');
  let path = source;
  for (let i = 0; i < parts.length - 1; i++) {
    path = `${path}/${parts[i]}`;
    if (!lstatSync(path).isDirectory()) return false;
  }
  return true;
}

/** The relative path of the directory holding `rel` ("" for the source itself and its entries). */
function parentOf(rel: string): string {
  const at = rel.lastIndexOf('/');
  return at < 0 ? '' : rel.slice(0, at);
}

/** "EACCES: permission denied" from a Node errno error (without the path Node appends), or the message. */
function errnoReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const head = (e.message ?? String(err)).split(',')[0]!;
  return e.code && !head.startsWith(e.code) ? `${e.code}: ${head}` : head;
}
