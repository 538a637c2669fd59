/**
 * A kopia repository, opened read-only: `KopiaRepository.open({ store, password })` reads the format blob, derives
 * the key, checks the configuration is one this reader understands, loads the current indexes and the manifests.
 * Nothing is ever written: no lock, no cache, no maintenance marker (kopia readers need none).
 */
import { isNotFound, type ObjectStore } from '../../plugins/object-store/index.js';
import { RepositoryNotFoundError, WrongPasswordError } from '../errors.js';
import { KopiaBlobStorage } from './blob-storage.js';
import { KopiaContents } from './contents.js';
import { contentCipher } from './content-crypto.js';
import type { ContentWorkerData } from './content-worker.js';
import { checkSupported, openRepositoryConfig, parseFormatBlob, type KopiaFormatBlob, type KopiaRepositoryConfig } from './format.js';
import { contentHash } from './hashing.js';
import { loadMergedIndex } from './index-blobs.js';
import type { MergedIndex } from './index.js';
import { KopiaObjects, type ObjectId } from './objects.js';
import { findSnapshot, loadManifests, readDirectory, snapshotFrom, type KopiaDirEntry, type KopiaSnapshot, type ManifestEntry } from './snapshots.js';

export interface OpenKopiaOptions {
  store: ObjectStore;
  /** The password, or candidates tried in order (`passwordIndex` says which one opened it). */
  password: string | readonly string[];
  /**
   * Also recompute every content's keyed hash and compare it with its ID (default false). Authentication already
   * proves a content is the one written under its ID (its key and additional data derive from the ID), which is all
   * kopia's own reader checks; the hash costs a second pass over every byte.
   */
  verify?: boolean;
  signal?: AbortSignal;
}

export class KopiaRepository {
  private constructor(
    readonly blobs: KopiaBlobStorage,
    readonly formatBlob: KopiaFormatBlob,
    readonly config: KopiaRepositoryConfig,
    readonly index: MergedIndex,
    readonly contents: KopiaContents,
    readonly objects: KopiaObjects,
    private readonly manifests: Map<string, ManifestEntry>,
    /** Which of the candidate passwords opened the repository. */
    readonly passwordIndex: number,
    /** Whether every content read is checked against its ID. */
    readonly verify: boolean,
  ) {}

  /** Whether a kopia repository is at the root of the store (its format blob is there). */
  static exists(store: ObjectStore): Promise<boolean> {
    return KopiaBlobStorage.holdsRepository(store);
  }

  /** The storage and format blob of the repository at the root of the store. */
  private static async format(store: ObjectStore, signal?: AbortSignal): Promise<{ blobs: KopiaBlobStorage; formatBlob: KopiaFormatBlob }> {
    const missing = () => new RepositoryNotFoundError(`no kopia repository at ${store.description} (no kopia.repository)`);
    const blobs = await KopiaBlobStorage.open(store);
    if (!blobs) throw missing();
    try {
      return { blobs, formatBlob: parseFormatBlob(await blobs.get('kopia.repository', undefined, signal)) };
    } catch (err) {
      if (isNotFound(err)) throw missing();
      throw err;
    }
  }

  /** The configuration, with the first candidate password that opens it; WrongPasswordError when none does. */
  private static async unlock(formatBlob: KopiaFormatBlob, password: string | readonly string[]): Promise<{ config: KopiaRepositoryConfig; passwordIndex: number }> {
    const candidates = typeof password === 'string' ? [password] : password;
    let wrong: unknown = new WrongPasswordError();
    for (const [i, p] of candidates.entries()) {
      try {
        return { config: await openRepositoryConfig(formatBlob, p), passwordIndex: i };
      } catch (err) {
        if (!(err instanceof WrongPasswordError)) throw err;
        wrong = err;
      }
    }
    throw wrong;
  }

  /**
   * Which candidate password opens the repository, checking only its format blob (a key derivation, no index read);
   * WrongPasswordError when none does.
   */
  static async checkPassword(store: ObjectStore, password: string | readonly string[]): Promise<number> {
    const { formatBlob } = await KopiaRepository.format(store);
    const { config, passwordIndex } = await KopiaRepository.unlock(formatBlob, password);
    checkSupported(config);
    return passwordIndex;
  }

  static async open(options: OpenKopiaOptions): Promise<KopiaRepository> {
    const { blobs, formatBlob } = await KopiaRepository.format(options.store, options.signal);
    const { config, passwordIndex } = await KopiaRepository.unlock(formatBlob, options.password);
    checkSupported(config);
    const cipher = contentCipher(config.encryption, config.masterKey);
    const hash = options.verify === true ? contentHash(config.hash, config.hmacSecret) : undefined;
    const index = await loadMergedIndex(blobs, { epochs: config.epochs, cipher, ...(options.signal ? { signal: options.signal } : {}) });
    const contents = new KopiaContents({ blobs, index, cipher, ...(hash ? { hash } : {}) });
    const objects = new KopiaObjects(contents);
    const manifests = await loadManifests(index, contents, options.signal);
    return new KopiaRepository(blobs, formatBlob, config, index, contents, objects, manifests, passwordIndex, options.verify === true);
  }

  /** What a content worker needs to open this repository's contents as `contents` does. */
  contentWorkerData(): ContentWorkerData {
    return {
      encryption: this.config.encryption,
      masterKey: Uint8Array.from(this.config.masterKey),
      ...(this.verify ? { hash: this.config.hash, hmacSecret: Uint8Array.from(this.config.hmacSecret) } : {}),
    };
  }

  get description(): string {
    return this.blobs.description;
  }

  /** Every snapshot, oldest first. */
  listSnapshots(): KopiaSnapshot[] {
    return [...this.manifests.values()]
      .filter((m) => m.labels.type === 'snapshot')
      .map(snapshotFrom)
      .sort((a, b) => (a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1 : 0));
  }

  loadSnapshot(id: string): KopiaSnapshot {
    return findSnapshot(this.manifests, id);
  }

  readDirectory(id: ObjectId, signal?: AbortSignal): Promise<KopiaDirEntry[]> {
    return readDirectory(this.objects, id, signal);
  }
}
