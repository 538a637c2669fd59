/**
 * A kopia repository, opened read-only: `KopiaRepository.open({ store, password })` reads the format blob, derives
 * the key, checks the configuration is one this reader understands, loads the current indexes and the manifests.
 * Nothing is ever written: no lock, no cache, no maintenance marker (kopia readers need none).
 */
import { isNotFound, type ObjectStore } from '../../plugins/object-store/index.js';
import { RepositoryNotFoundError } from '../errors.js';
import { KopiaBlobStorage } from './blob-storage.js';
import { KopiaContents } from './contents.js';
import { contentCipher } from './content-crypto.js';
import { checkSupported, openRepositoryConfig, parseFormatBlob, type KopiaFormatBlob, type KopiaRepositoryConfig } from './format.js';
import { contentHash } from './hashing.js';
import { loadMergedIndex } from './index-blobs.js';
import type { MergedIndex } from './index.js';
import { KopiaObjects, type ObjectId } from './objects.js';
import { findSnapshot, loadManifests, readDirectory, snapshotFrom, type KopiaDirEntry, type KopiaSnapshot, type ManifestEntry } from './snapshots.js';

export interface OpenKopiaOptions {
  store: ObjectStore;
  password: string;
  /** Check every content read against its ID (default true; authentication alone already catches corruption). */
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
  ) {}

  /** Whether a kopia repository is at the root of the store (its format blob is there). */
  static exists(store: ObjectStore): Promise<boolean> {
    return KopiaBlobStorage.holdsRepository(store);
  }

  static async open(options: OpenKopiaOptions): Promise<KopiaRepository> {
    const blobs = await KopiaBlobStorage.open(options.store);
    if (!blobs) throw new RepositoryNotFoundError(`no kopia repository at ${options.store.description} (no kopia.repository)`);
    let raw: Buffer;
    try {
      raw = await blobs.get('kopia.repository', undefined, options.signal);
    } catch (err) {
      if (isNotFound(err)) throw new RepositoryNotFoundError(`no kopia repository at ${options.store.description} (no kopia.repository)`);
      throw err;
    }
    const formatBlob = parseFormatBlob(raw);
    const config = await openRepositoryConfig(formatBlob, options.password);
    checkSupported(config);
    const cipher = contentCipher(config.encryption, config.masterKey);
    const hash = options.verify === false ? undefined : contentHash(config.hash, config.hmacSecret);
    const index = await loadMergedIndex(blobs, { epochs: config.epochs, cipher, ...(options.signal ? { signal: options.signal } : {}) });
    const contents = new KopiaContents({ blobs, index, cipher, ...(hash ? { hash } : {}) });
    const objects = new KopiaObjects(contents);
    const manifests = await loadManifests(index, contents, options.signal);
    return new KopiaRepository(blobs, formatBlob, config, index, contents, objects, manifests);
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
