/**
 * The roles a Repository plays, as small interfaces: a consumer names the ones it uses (a restore reads packs and
 * snapshots, maintenance rewrites packs and the index, `repo key` only touches key files), so what it depends on is
 * visible in its signature and a test can hand it a small fake. Repository (repository.ts) implements them all;
 * snapshots, key files and locks are parts it composes (snapshots.ts, key-ring.ts, locks.ts), while the blob, pack and
 * index methods stay on it, so the hot paths make no extra hop.
 */
import type { ObjectStore } from '../plugins/object-store/types.js';
import type { ContentHasher, MasterKeys } from './crypto.js';
import type { BlobId, PackId } from './ids.js';
import type { BlobLocation, MasterIndex } from './index-file.js';
import type { KeyRing } from './key-ring.js';
import type { HeldLock, LockOptions, StoredLock } from './locks.js';
import type { OpenPool } from './open-pool.js';
import type { PackEntry } from './pack.js';
import type { PackSpan } from './read-plan.js';
import type { RepoConfig } from './repository.js';
import type { SnapshotStore } from './snapshots.js';

/** What the other roles are made of: the object store, the master keys and the config. */
export interface RepoBasics {
  readonly store: ObjectStore;
  readonly keys: MasterKeys;
  readonly config: RepoConfig;
}

/** Naming new content: the keyed hash that blob IDs are (crypto.ts). */
export interface ContentIds {
  readonly hasher: ContentHasher;
}

/** The in-memory index of every blob (blob ID → pack, offset, length), and loading the index files into it. */
export interface BlobIndex {
  readonly index: MasterIndex;
  /** Loads the index files not loaded yet; returns the names of all of them. */
  loadIndex(): Promise<string[]>;
}

/** Blobs' plaintext by ID, authenticated and checked against the ID. */
export interface BlobLoader {
  loadBlob(id: BlobId, options?: { signal?: AbortSignal }): Promise<Buffer>;
  /** The same through a small cache: tree blobs are read again and again (parent lookups, walks). */
  loadTreeBlob(id: BlobId): Promise<Buffer>;
}

/** A blob's sealed bytes as read from its pack, not yet authenticated, with where they came from. */
export interface SealedBlob {
  sealed: Buffer;
  loc: BlobLocation;
  pack: PackId;
}

/** Sealed bytes out of packs, and opening them: for readers that plan their own reads (restore, check). */
export interface PackReader {
  readonly index: MasterIndex;
  /** One blob's sealed bytes through the read windows when they are on; `target` may receive them. */
  readSealed(id: BlobId, options?: { signal?: AbortSignal; target?: Buffer }): Promise<SealedBlob>;
  /** One ranged read of a pack past the read windows; `first` names a blob in it for the error when it is missing. */
  readPackSpan(span: PackSpan<PackId>, first: BlobId, signal?: AbortSignal, target?: Buffer): Promise<Buffer>;
  /** Authenticates, decompresses and checks sealed bytes against their ID. */
  openSealedBlob(id: BlobId, flags: number, rawLength: number, sealed: Buffer, pack: PackId): Promise<Buffer>;
  /** A pack's header entries, read from its tail. */
  readPackHeader(pack: PackId, size?: number): Promise<PackEntry[]>;
}

/** Where writeBlobAt puts a blob's plaintext (or a slice of it). */
export interface BlobFileWrite {
  fd: number;
  pos: number;
  sparse: boolean;
  slice?: [number, number];
}

/** A restore's reading on top of PackReader: read windows, and worker threads that open blobs into files. */
export interface RestoreReader extends PackReader {
  useReadWindows(size: number): void;
  useWorkers(workers: number): void;
  closeWorkers(): Promise<void>;
  /** The pool of useWorkers, if on. */
  readonly workers: OpenPool | undefined;
  writeBlobAt(id: BlobId, loc: BlobLocation, pack: PackId, sealed: Buffer, write: BlobFileWrite): Promise<number>;
}

/** Checking every blob of a repository (check with readData): the opening on worker threads when they are on. */
export interface BlobVerifier {
  useWorkers(workers: number): void;
  closeWorkers(): Promise<void>;
  /** Authenticates, decompresses and checks sealed bytes against their ID (on a worker when on); keeps nothing. */
  verifySealedBlob(id: BlobId, flags: number, rawLength: number, sealed: Buffer, pack: PackId): Promise<void>;
}

/** Writing packs and index files (blob-writer.ts, maintenance): straight to the store, with the index kept current. */
export interface PackWriter extends RepoBasics {
  readonly index: MasterIndex;
}

/** Taking locks (docs/repository-format.md §8), and reading everyone's. */
export interface Locker {
  lock(options: LockOptions): Promise<HeldLock>;
  read(): Promise<StoredLock[]>;
}

export interface WithSnapshots {
  readonly snapshots: SnapshotStore;
}

export interface WithLocks {
  readonly locks: Locker;
}

export interface WithKeyRing {
  readonly keyRing: KeyRing;
}
