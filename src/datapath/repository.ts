/**
 * A repository: config, keys, index, blobs, snapshots and locks over an object store (docs/repository-format.md).
 *
 * Repository.open/init is the entry point. The object plays several roles (repository-roles.ts), and consumers name
 * the ones they use: the index and blob, pack and restore reads are its own methods (the hot paths, one call each);
 * snapshots, key files and locks are parts it composes (`snapshots`, `keyRing`, `locks`).
 */
import { randomBytes } from 'node:crypto';
import type { ObjectStore } from '../plugins/object-store/types.js';
import { isNotFound } from '../plugins/object-store/errors.js';
import { ContentHasher, newMasterKeys, openBlob, openFile, sealFile, type MasterKeys } from './crypto.js';
import { createKeyFile, unwrapKeyFile, DEFAULT_KDF, type EarlyDerivations, type KeyFile } from './keys.js';
import { loadIndexInto, MasterIndex, type BlobLocation } from './index-file.js';
import { DEFAULT_CHUNK_SIZES, type ChunkerParams } from './chunker.js';
import { decompress } from './compress.js';
import { BlobType, FLAG_ZSTD, packKey, parsePackHeader, type PackEntry } from './pack.js';
import { BlobOpenError, OpenPool } from './open-pool.js';
import { writeChunkSync } from './restore-writes.js';
import { RepositoryLocks, type LockingOptions } from './locks.js';
import { KeyRing, writeKeyFile } from './key-ring.js';
import { SnapshotStore } from './snapshots.js';
import { ReadWindows } from './read-windows.js';
import { TreePackReads } from './tree-packs.js';
import type { PackSpan } from './read-plan.js';
import { idBytes, type BlobId, type PackId } from './ids.js';
import type {
  BlobFileWrite,
  BlobIndex,
  BlobLoader,
  BlobVerifier,
  ContentIds,
  PackWriter,
  RestoreReader,
  SealedBlob,
  WithKeyRing,
  WithLocks,
  WithSnapshots,
} from './repository-roles.js';
import { RepositoryCorruptError, RepositoryExistsError, RepositoryNotFoundError, WrongPasswordError } from './errors.js';

/** How often loadIndex lists the index again when listed files vanish under a concurrent maintenance. */
const MAX_INDEX_LIST_ROUNDS = 3;

export const FORMAT_VERSION = 1;

export interface RepoConfig {
  version: number;
  id: string;
  created: string;
  chunker: ChunkerParams;
  packSize: number;
  /** zstd level of new blobs (reading needs no level): 'zstd-1' since 2026-11-22 10:00, 'zstd-3' before. */
  compression: Compression;
  /**
   * Format features beyond version 1 that snapshots of this repository may use; a cairn that does not know one
   * refuses to open the repository rather than misread it. Absent = none.
   */
  features?: RepoFeature[];
}

/**
 * `bundles`: small files are stored several to a blob, and tree entries refer to their bytes as slices of it
 * (docs/repository-format.md §6.2). New repositories have it since 2026-11-22.
 */
export const REPO_FEATURES = ['bundles'] as const;
export type RepoFeature = (typeof REPO_FEATURES)[number];
export const DEFAULT_FEATURES: readonly RepoFeature[] = ['bundles'];

export function hasFeature(config: RepoConfig, feature: RepoFeature): boolean {
  return config.features?.includes(feature) ?? false;
}

export const COMPRESSIONS = ['zstd-1', 'zstd-3'] as const;
export type Compression = (typeof COMPRESSIONS)[number];
/**
 * New repositories: zstd level 1. Against level 3 it stores text ~3.5 % larger and compresses it ~20 % faster, which
 * on a backup of many small text files is ~12 % of the wall time (docs/repository-format.md §5).
 */
export const DEFAULT_COMPRESSION: Compression = 'zstd-1';

/** The zstd level a repository's config names. */
export function compressionLevel(config: RepoConfig): number {
  return config.compression === 'zstd-1' ? 1 : 3;
}

/**
 * Data packs of new repositories (docs/repository-format.md §4.2). A backup holds a few pack buffers at once (one filling, two uploading),
 * so this size is most of its memory beyond the baseline: 8 MiB instead of 16 took a first backup's peak RSS from
 * ~280 to ~240 MB at the same CPU time and speed.
 */
export const DEFAULT_PACK_SIZE = 8 << 20;

export interface InitOptions {
  store: ObjectStore;
  password: string;
  kdf?: { N: number; r: number; p: number };
  packSize?: number;
  chunkSizes?: { min: number; avg: number; max: number };
  /** zstd level of new blobs (default DEFAULT_COMPRESSION). */
  compression?: Compression;
  /** Format features new snapshots may use (default DEFAULT_FEATURES). */
  features?: readonly RepoFeature[];
}

export interface OpenOptions {
  store: ObjectStore;
  password: string;
  /** Read the index files while the key is derived (for a loadIndex() that follows). */
  prefetchIndex?: boolean;
  /** Who this process's locks name, and how to tell whether other locks' commands still run. */
  locking?: LockingOptions;
  /** Key derivations already under way for key files this repository may hold (key-file-cache.ts). */
  earlyDerivations?: EarlyDerivations;
}

export { LOCK_STALE_MS, type HeldLock, type LockInfo, type LockOptions, type LockingOptions } from './locks.js';

export class Repository implements PackWriter, ContentIds, BlobIndex, BlobLoader, RestoreReader, BlobVerifier, WithSnapshots, WithKeyRing, WithLocks {
  readonly index = new MasterIndex();
  readonly hasher: ContentHasher;
  readonly snapshots: SnapshotStore;
  readonly keyRing: KeyRing;
  readonly locks: RepositoryLocks;
  private readonly treeCache = new Map<BlobId, Buffer>();
  private openPool: OpenPool | undefined;
  private readonly windows: ReadWindows;
  private readonly treePacks: TreePackReads;
  private readonly loadedIndexes = new Set<string>();
  /** Index files read while the key was being derived (open), by name. */
  private indexPrefetch: Promise<Map<string, Buffer>> | undefined;

  private constructor(
    readonly store: ObjectStore,
    readonly keys: MasterKeys,
    readonly config: RepoConfig,
    keyId: string,
    /** The key file whose password opened this repository (the one init made, after init). */
    readonly openedWith: KeyFile,
    locking: LockingOptions = {},
  ) {
    this.hasher = new ContentHasher(keys.id);
    this.snapshots = new SnapshotStore(store, keys);
    this.keyRing = new KeyRing(store, keys, keyId);
    this.locks = new RepositoryLocks(store, keys, locking);
    this.windows = new ReadWindows(store);
    this.treePacks = new TreePackReads(store, this.index);
  }

  /** The ID of the key file this repository was opened with. */
  get keyId(): string {
    return this.keyRing.currentId;
  }

  static async init(options: InitOptions): Promise<Repository> {
    const { store } = options;
    if (await store.head('config')) throw new RepositoryExistsError(`a repository already exists at ${store.description}`);
    const keys = newMasterKeys();
    const config: RepoConfig = {
      version: FORMAT_VERSION,
      id: randomBytes(16).toString('hex'),
      created: new Date().toISOString(),
      chunker: { ...(options.chunkSizes ?? DEFAULT_CHUNK_SIZES), seed: randomBytes(32).toString('base64') },
      packSize: options.packSize ?? DEFAULT_PACK_SIZE,
      compression: options.compression ?? DEFAULT_COMPRESSION,
      features: [...(options.features ?? DEFAULT_FEATURES)],
    };
    const keyFile = await createKeyFile(keys, options.password, options.kdf ?? DEFAULT_KDF);
    // Key first, config last: a repository with a config always has a key that opens it.
    const keyId = await writeKeyFile(store, keyFile);
    await store.put('config', sealFile(keys, 'config', Buffer.from(JSON.stringify(config))));
    return new Repository(store, keys, config, keyId, keyFile);
  }

  static async open(options: OpenOptions): Promise<Repository> {
    const { store, password } = options;
    let sealedConfig: Buffer;
    try {
      sealedConfig = await store.get('config');
    } catch (err) {
      if (isNotFound(err)) throw new RepositoryNotFoundError(`no repository at ${store.description} (run 'cairn repo init')`);
      throw err;
    }
    // Backup and restore need the index files next: read them while scrypt runs (a few hundred ms on S3).
    const indexPrefetch = options.prefetchIndex ? prefetchIndexFiles(store) : undefined;
    indexPrefetch?.catch(() => undefined);
    for await (const { key } of store.list('keys/')) {
      let file: KeyFile;
      try {
        file = JSON.parse((await store.get(key)).toString()) as KeyFile;
      } catch {
        continue;
      }
      const keys = await unwrapKeyFile(file, password, options.earlyDerivations);
      if (!keys) continue;
      let config: RepoConfig;
      try {
        config = JSON.parse(openFile(keys, 'config', sealedConfig, 'config').toString()) as RepoConfig;
      } catch (err) {
        throw new RepositoryCorruptError(`repository config cannot be read: ${(err as Error).message}`);
      }
      if (config.version !== FORMAT_VERSION) throw new RepositoryCorruptError(`repository format version ${config.version} is not supported (this cairn reads ${FORMAT_VERSION})`);
      if (!COMPRESSIONS.includes(config.compression)) throw new RepositoryCorruptError(`repository compression ${JSON.stringify(config.compression)} is not supported (this cairn knows ${COMPRESSIONS.join(', ')})`);
      const unknown = (config.features ?? []).filter((f) => !(REPO_FEATURES as readonly string[]).includes(f));
      if (unknown.length > 0) throw new RepositoryCorruptError(`repository uses format features this cairn does not know: ${unknown.join(', ')} (this cairn knows ${REPO_FEATURES.join(', ')}); use a newer cairn`);
      const repo = new Repository(store, keys, config, key.slice('keys/'.length), file, options.locking);
      repo.indexPrefetch = indexPrefetch;
      return repo;
    }
    throw new WrongPasswordError();
  }

  // ---- index (BlobIndex) ----

  /**
   * Loads every index file into memory (each file once: a second call adds only new ones). Returns the index file
   * names. Files fetched ahead while the key was being derived (open) are used when still listed.
   *
   * A reader without a lock (`repo snapshots`) may list the index while maintenance consolidates it: maintenance
   * writes the consolidated file before it deletes the ones it replaces, so a listed file that is gone when read
   * was superseded, and listing again finds its successor. Only a file still missing after that is an error.
   */
  async loadIndex(): Promise<string[]> {
    const superseded = new Set<string>();
    for (let round = 1; ; round++) {
      const names: string[] = [];
      for await (const { key } of this.store.list('index/')) names.push(key.slice('index/'.length));
      const vanished = await this.loadIndexFiles(names.filter((n) => !this.loadedIndexes.has(n) && !superseded.has(n)));
      if (vanished.length === 0) return names.filter((n) => !superseded.has(n));
      if (round >= MAX_INDEX_LIST_ROUNDS) {
        throw new RepositoryCorruptError(`index ${vanished[0]!.slice(0, 12)} was listed but cannot be read: it is missing`);
      }
      for (const name of vanished) superseded.add(name);
    }
  }

  /** Loads the named index files (8 at a time); returns the ones that were gone by the time they were read. */
  private async loadIndexFiles(todo: string[]): Promise<string[]> {
    const prefetched = this.indexPrefetch ? await this.indexPrefetch.catch(() => new Map<string, Buffer>()) : new Map<string, Buffer>();
    this.indexPrefetch = undefined;
    const vanished: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < todo.length) {
        const name = todo[next++]!;
        let sealed = prefetched.get(name);
        if (!sealed) {
          try {
            sealed = await this.store.get(`index/${name}`);
          } catch (err) {
            if (!isNotFound(err)) throw err;
            vanished.push(name);
            continue;
          }
        }
        try {
          loadIndexInto(this.keys, sealed, name, this.index);
        } catch (err) {
          throw new RepositoryCorruptError(`index ${name.slice(0, 12)} cannot be read: ${(err as Error).message}`);
        }
        this.loadedIndexes.add(name);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return vanished;
  }

  // ---- blob and pack reads (BlobLoader, PackReader) ----

  /** A blob's plaintext, authenticated and checked against its ID. */
  async loadBlob(id: BlobId, options: { signal?: AbortSignal } = {}): Promise<Buffer> {
    const cached = this.treeCache.get(id);
    if (cached) return cached;
    const { sealed, loc, pack } = await this.readSealed(id, options);
    return this.openSealedBlob(id, loc.flags, loc.rawLength, sealed, pack);
  }

  /**
   * A blob's sealed bytes (not yet authenticated) with its index entry, through the read windows when they are on
   * (useReadWindows). `target`, when given and large enough, may receive the bytes. Missing index entries, packs and
   * truncated packs are RepositoryCorruptErrors.
   */
  async readSealed(id: BlobId, options: { signal?: AbortSignal; target?: Buffer } = {}): Promise<SealedBlob> {
    const loc = this.index.get(id);
    if (!loc) throw new RepositoryCorruptError(`blob ${id.slice(0, 16)} is not in any index (missing index or pack)`);
    const pack = this.index.packOf(loc);
    try {
      return { sealed: await this.windows.read(pack, loc.pack, loc.offset, loc.length, options.signal, options.target), loc, pack };
    } catch (err) {
      throw packReadError(err, pack, id);
    }
  }

  /**
   * One ranged read of a pack, past the read windows (a restore plans these with read-plan.ts); `first` names a blob
   * in the range for the error when the pack is missing. `target`, when given and large enough, may receive the bytes.
   */
  async readPackSpan(span: PackSpan<PackId>, first: BlobId, signal?: AbortSignal, target?: Buffer): Promise<Buffer> {
    try {
      return await this.store.get(packKey(span.pack), { range: { offset: span.offset, length: span.length }, ...(signal ? { signal } : {}), ...(target ? { target } : {}) });
    } catch (err) {
      throw packReadError(err, span.pack, first);
    }
  }

  async openSealedBlob(hexId: BlobId, flags: number, rawLength: number, sealed: Buffer, pack: PackId): Promise<Buffer> {
    const id = idBytes(hexId);
    let plain: Buffer;
    try {
      plain = openBlob(this.keys, id, sealed);
      if (flags & FLAG_ZSTD) plain = await decompress(plain, rawLength);
    } catch (err) {
      throw new RepositoryCorruptError(`blob ${hexId.slice(0, 16)} in pack ${pack.slice(0, 12)} is corrupted: ${(err as Error).message}`);
    }
    if (plain.length !== rawLength || !this.hasher.id(plain).equals(id)) {
      throw new RepositoryCorruptError(`blob ${hexId.slice(0, 16)} in pack ${pack.slice(0, 12)} does not match its ID`);
    }
    return plain;
  }

  /** Tree blobs are small and read repeatedly (parent lookups); keep a bounded cache. */
  async loadTreeBlob(hexId: BlobId): Promise<Buffer> {
    const hit = this.treeCache.get(hexId);
    if (hit) return hit;
    const data = (await this.loadFromTreePack(hexId)) ?? (await this.loadBlob(hexId));
    this.treeCache.set(hexId, data);
    if (this.treeCache.size > 64) this.treeCache.delete(this.treeCache.keys().next().value!);
    return data;
  }

  /** A listing read through its pack's whole span (tree-packs.ts), or undefined when that pack is not read whole. */
  private async loadFromTreePack(hexId: BlobId): Promise<Buffer | undefined> {
    const loc = this.index.get(hexId);
    if (!loc || loc.type !== BlobType.Tree) return undefined;
    const pack = this.index.packOf(loc);
    const read = this.treePacks.read(pack, loc.pack, loc.offset, loc.length);
    if (!read) return undefined;
    let sealed: Buffer;
    try {
      sealed = await read;
    } catch (err) {
      throw packReadError(err, pack, hexId);
    }
    return this.openSealedBlob(hexId, loc.flags, loc.rawLength, sealed, pack);
  }

  /** A pack's header entries (reads the tail of the pack). */
  async readPackHeader(packId: PackId, size?: number): Promise<PackEntry[]> {
    const key = packKey(packId);
    let total = size;
    if (total === undefined) {
      const info = await this.store.head(key);
      if (!info) throw new RepositoryCorruptError(`pack ${packId.slice(0, 12)} is missing`);
      total = info.size;
    }
    const want = Math.min(total, 64 * 1024);
    let tail = await this.store.get(key, { range: { offset: total - want, length: want } });
    try {
      let parsed = parsePackHeader(this.keys, tail, total, packId.slice(0, 12));
      if ('needBytes' in parsed) {
        tail = await this.store.get(key, { range: { offset: total - parsed.needBytes, length: parsed.needBytes } });
        parsed = parsePackHeader(this.keys, tail, total, packId.slice(0, 12));
      }
      if ('needBytes' in parsed) throw new Error('header length changed');
      return parsed.entries;
    } catch (err) {
      throw new RepositoryCorruptError((err as Error).message);
    }
  }

  // ---- restore reads (RestoreReader) ----

  /**
   * Reads blobs through windows of `size` bytes from now on (restore): a miss fetches the window starting at the blob,
   * later blobs inside it are served from memory. Restores read packs nearly in order, so this turns thousands of
   * small ranged GETs (each a signed request on S3) into a few large ones. A handful of windows are kept.
   */
  useReadWindows(size: number): void {
    this.windows.use(size, this.index);
  }

  /** Opens blobs of at least 64 KiB on `workers` threads from now on (restore); closeWorkers() ends them. */
  useWorkers(workers: number): void {
    const slab = 2 * this.config.chunker.avg + 64 * 1024;
    if (workers > 0 && !this.openPool) this.openPool = new OpenPool(this.keys, workers, slab, this.config.chunker.max);
  }

  async closeWorkers(): Promise<void> {
    const pool = this.openPool;
    this.openPool = undefined;
    await pool?.close();
  }

  /**
   * Opens a blob whose sealed bytes the caller read and writes its plaintext (or a slice of it) into the open file
   * `fd` at `pos` on a worker thread; resolves with the bytes written. Without workers, or for a small blob, it is
   * opened and written here. A blob that cannot be opened is a RepositoryCorruptError naming it and its pack; a failed
   * write, the file system's error.
   */
  async writeBlobAt(hexId: BlobId, loc: BlobLocation, pack: PackId, sealed: Buffer, write: BlobFileWrite): Promise<number> {
    const pool = this.openPool;
    if (!pool || loc.rawLength < 64 * 1024) {
      let plain = await this.openSealedBlob(hexId, loc.flags, loc.rawLength, sealed, pack);
      if (write.slice) {
        if (write.slice[0] + write.slice[1] > plain.length) throw new RepositoryCorruptError(`blob ${hexId.slice(0, 16)} in pack ${pack.slice(0, 12)} is corrupted: is shorter than the slice a file names in it`);
        plain = plain.subarray(write.slice[0], write.slice[0] + write.slice[1]);
      }
      writeChunkSync(write.fd, plain, write.pos, write.sparse);
      return plain.length;
    }
    return onWorker(pool, hexId, pack, sealed, (id, buffer) => pool.openAndWrite(id, buffer, sealed.length, loc.flags, loc.rawLength, write));
  }

  /**
   * Checks a blob's sealed bytes against its ID and drops the plaintext: on a worker thread when useWorkers is on
   * (check reads every pack, and opening the blobs is most of its CPU), else here. A blob that fails is a
   * RepositoryCorruptError naming it and its pack.
   */
  async verifySealedBlob(hexId: BlobId, flags: number, rawLength: number, sealed: Buffer, pack: PackId): Promise<void> {
    const pool = this.openPool;
    if (!pool) {
      await this.openSealedBlob(hexId, flags, rawLength, sealed, pack);
      return;
    }
    await onWorker(pool, hexId, pack, sealed, async (id, buffer) => (await pool.open(id, buffer, sealed.length, flags, rawLength)).release());
  }

  /** The worker pool of useWorkers (restore hands whole small files to it), if on. */
  get workers(): OpenPool | undefined {
    return this.openPool;
  }
}

/** A missing or truncated pack as the RepositoryCorruptError that says so; other errors as they are. */
function packReadError(err: unknown, pack: PackId, hexId: BlobId): unknown {
  if (isNotFound(err)) return new RepositoryCorruptError(`pack ${pack.slice(0, 12)} holding blob ${hexId.slice(0, 16)} is missing`);
  return err instanceof Error && /shorter than the range/.test(err.message) ? new RepositoryCorruptError(`pack ${pack.slice(0, 12)} is truncated`) : err;
}

/** Reads every index file (bounded: at most 64 MiB in total are kept ahead of use). */
async function prefetchIndexFiles(store: ObjectStore): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const names: string[] = [];
  for await (const { key, size } of store.list('index/')) {
    names.push(key.slice('index/'.length));
    if (names.length > 4096 || size > 64 << 20) return out;
  }
  let total = 0;
  let next = 0;
  const worker = async () => {
    while (next < names.length && total < 64 << 20) {
      const name = names[next++]!;
      const bytes = await store.get(`index/${name}`);
      total += bytes.length;
      out.set(name, bytes);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return out;
}

/**
 * Hands a blob's sealed bytes to a worker of `pool` (copied into one of its buffers, which is transferred) and runs
 * `send` with them; a blob the worker cannot open is a RepositoryCorruptError naming it and its pack.
 */
async function onWorker<T>(pool: OpenPool, hexId: BlobId, pack: PackId, sealed: Buffer, send: (id: Buffer, buffer: Buffer) => Promise<T>): Promise<T> {
  const buffer = pool.take(sealed.length);
  sealed.copy(buffer, 0);
  try {
    return await send(idBytes(hexId), buffer);
  } catch (err) {
    if (err instanceof BlobOpenError) throw new RepositoryCorruptError(`blob ${hexId.slice(0, 16)} in pack ${pack.slice(0, 12)} is corrupted: ${err.message}`);
    throw err;
  }
}
