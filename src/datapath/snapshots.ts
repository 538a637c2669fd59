/**
 * Snapshots (docs/repository-format.md §6): sealed JSON at `snapshots/<id>`, one per backup, naming the root tree of
 * its listing. A repository's snapshot store (Repository.snapshots) saves, finds, lists and forgets them.
 */
import type { ObjectStore } from '../plugins/object-store/types.js';
import { isNotFound } from '../plugins/object-store/errors.js';
import { openFile, sealFile, type MasterKeys } from './crypto.js';
import { RepositoryCorruptError, SnapshotNotFoundError } from './errors.js';
import { newSnapshotId, parseSnapshotId, type BlobId, type SnapshotId } from './ids.js';

export interface SnapshotSummary {
  files: number;
  dirs: number;
  bytes: number;
  newBytes: number;
  reusedBytes: number;
  newFiles: number;
  unchangedFiles: number;
  storedBytes: number;
  durationMs: number;
  errors: number;
}

export interface Snapshot {
  version: 1;
  time: string;
  hostname: string;
  username: string;
  source: string;
  parent?: SnapshotId;
  tags: Record<string, string>;
  description?: string;
  /** The tree blobs of the root listing. */
  tree: BlobId[];
  summary: SnapshotSummary;
}

export interface SnapshotWithId extends Snapshot {
  id: SnapshotId;
}

const PREFIX = 'snapshots/';

export class SnapshotStore {
  constructor(
    private readonly store: ObjectStore,
    private readonly keys: MasterKeys,
  ) {}

  async save(snapshot: Snapshot): Promise<SnapshotId> {
    const id = newSnapshotId();
    await this.store.put(PREFIX + id, sealFile(this.keys, 'snapshot', Buffer.from(JSON.stringify(snapshot))));
    return id;
  }

  async load(id: SnapshotId): Promise<SnapshotWithId> {
    let sealed: Buffer;
    try {
      sealed = await this.store.get(PREFIX + id);
    } catch (err) {
      if (isNotFound(err)) throw new SnapshotNotFoundError(`snapshot ${id.slice(0, 8)} not found`);
      throw err;
    }
    try {
      return { id, ...(JSON.parse(openFile(this.keys, 'snapshot', sealed, `snapshot ${id.slice(0, 8)}`).toString()) as Snapshot) };
    } catch (err) {
      throw new RepositoryCorruptError(`snapshot ${id.slice(0, 8)} cannot be read: ${(err as Error).message}`);
    }
  }

  /**
   * Forgets a snapshot (deleting a backup does this); its data stays until maintenance finds it unreferenced.
   * Returns false when there was no such snapshot. The ID comes from outside (a backup's resources), so it is checked.
   */
  async delete(text: string): Promise<boolean> {
    const id = parseSnapshotId(text);
    if (!id) throw new SnapshotNotFoundError(`invalid snapshot ID ${JSON.stringify(text)}`);
    if (!(await this.store.head(PREFIX + id))) return false;
    await this.store.delete(PREFIX + id);
    return true;
  }

  /** The IDs of all snapshots, in the store's (ascending) order, without reading them. */
  async ids(): Promise<SnapshotId[]> {
    const ids: SnapshotId[] = [];
    for await (const { key } of this.store.list(PREFIX)) ids.push(key.slice(PREFIX.length) as SnapshotId);
    return ids;
  }

  /** All snapshots, oldest first. */
  async list(): Promise<SnapshotWithId[]> {
    const out = await Promise.all((await this.ids()).map((id) => this.load(id)));
    return out.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  }

  /** A snapshot by full ID, unique prefix, or "latest" (optionally of one source path). */
  async find(ref: string, source?: string): Promise<SnapshotWithId> {
    if (ref === 'latest') {
      const all = (await this.list()).filter((s) => source === undefined || s.source === source);
      const last = all[all.length - 1];
      if (!last) throw new SnapshotNotFoundError(source ? `no snapshot of ${source} yet` : 'the repository has no snapshots');
      return last;
    }
    if (!/^[0-9a-f]{1,64}$/.test(ref)) throw new SnapshotNotFoundError(`invalid snapshot ID ${JSON.stringify(ref)}`);
    const full = parseSnapshotId(ref);
    if (full) return this.load(full);
    const matches: SnapshotId[] = [];
    for await (const { key } of this.store.list(PREFIX + ref)) matches.push(key.slice(PREFIX.length) as SnapshotId);
    if (matches.length === 0) throw new SnapshotNotFoundError(`no snapshot matches ${ref}`);
    if (matches.length > 1) throw new SnapshotNotFoundError(`snapshot ID prefix ${ref} is ambiguous (${matches.length} matches)`);
    return this.load(matches[0]!);
  }
}
