/**
 * Manifests, snapshots and directories. Manifests are JSON kept in contents with prefix `m`, each content gzip'd
 * `{"entries":[{"id","labels","modified","deleted","data"}]}`; an ID's entry with the latest `modified` wins, and a
 * winning deleted entry removes the manifest. A snapshot is a manifest labelled `type: snapshot` whose data is
 * `{"source":{"host","userName","path"},"startTime","endTime","rootEntry":{…},"tags":{…},…}`; the ID Velero keeps
 * in a PodVolumeBackup's `status.snapshotID` is the manifest ID. A directory is an object holding
 * `{"stream":"kopia:directory","entries":[…],"summary":{…}}`; each entry has `name`, `type` (`f` file, `d`
 * directory, `s` symlink), `mode` (octal string of Go's os.FileMode: permission bits, setuid 1<<23, setgid 1<<22,
 * sticky 1<<20), `size`, `mtime` (RFC 3339 with nanoseconds), `uid`, `gid` and `obj` (the object of the file's
 * bytes, the directory's listing, or the symlink's target).
 */
import { gunzipSync } from 'node:zlib';
import { RepositoryCorruptError, SnapshotNotFoundError } from '../errors.js';
import type { KopiaContents } from './contents.js';
import type { MergedIndex } from './index.js';
import { parseObjectId, type KopiaObjects, type ObjectId } from './objects.js';

export interface ManifestEntry {
  id: string;
  labels: Record<string, string>;
  modified: string;
  deleted: boolean;
  data: unknown;
}

export type KopiaEntryType = 'f' | 'd' | 's';

export interface KopiaDirEntry {
  name: string;
  type: KopiaEntryType | string;
  /** Unix mode bits (permissions with setuid 0o4000, setgid 0o2000, sticky 0o1000). */
  mode: number;
  size: number;
  /** Modification time in nanoseconds since the epoch. */
  mtimeNs: bigint;
  uid: number;
  gid: number;
  object?: ObjectId;
  /** Bytes and file count below a directory (from its summary). */
  summary?: { totalFileSize: number; totalFileCount: number };
}

export interface KopiaSnapshot {
  id: string;
  source: { host: string; userName: string; path: string };
  description: string;
  startTime: string;
  endTime: string;
  incomplete?: string;
  tags: Record<string, string>;
  root: KopiaDirEntry;
}

/** Every manifest of the repository, merged. */
export async function loadManifests(index: MergedIndex, contents: KopiaContents, signal?: AbortSignal): Promise<Map<string, ManifestEntry>> {
  const merged = new Map<string, ManifestEntry>();
  for (const info of index.withPrefix('m')) {
    if (info.deleted) continue;
    let parsed: { entries?: Partial<ManifestEntry>[] };
    try {
      parsed = JSON.parse(gunzipSync(await contents.get(info.id, signal)).toString('utf8')) as { entries?: Partial<ManifestEntry>[] };
    } catch (err) {
      if (err instanceof RepositoryCorruptError) throw err;
      throw new RepositoryCorruptError(`manifest content ${info.id} cannot be read: ${(err as Error).message}`);
    }
    for (const e of parsed.entries ?? []) {
      if (!e.id) continue;
      const entry: ManifestEntry = { id: e.id, labels: e.labels ?? {}, modified: e.modified ?? '', deleted: e.deleted === true, data: e.data };
      const prev = merged.get(entry.id);
      if (!prev || Date.parse(entry.modified) > Date.parse(prev.modified) || (Date.parse(entry.modified) === Date.parse(prev.modified) && nanos(entry.modified) > nanos(prev.modified))) {
        merged.set(entry.id, entry);
      }
    }
  }
  for (const [id, e] of merged) if (e.deleted) merged.delete(id);
  return merged;
}

/** The fraction of a second of an RFC 3339 time, in nanoseconds (Date keeps milliseconds only). */
function nanos(t: string): number {
  const m = /\.(\d+)/.exec(t);
  return m ? Number((m[1] ?? '').padEnd(9, '0').slice(0, 9)) : 0;
}

/** Go's os.FileMode bits → Unix mode bits. */
export function unixMode(goMode: number): number {
  let m = goMode & 0o777;
  if (goMode & (1 << 23)) m |= 0o4000;
  if (goMode & (1 << 22)) m |= 0o2000;
  if (goMode & (1 << 20)) m |= 0o1000;
  return m;
}

/** RFC 3339 (nanoseconds) → ns since the epoch. */
export function timeToNs(t: string | undefined): bigint {
  if (!t) return 0n;
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) return 0n;
  const secs = BigInt(Math.floor(ms / 1000));
  return secs * 1_000_000_000n + BigInt(nanos(t));
}

interface RawDirEntry {
  name?: string;
  type?: string;
  mode?: string;
  size?: number;
  mtime?: string;
  uid?: number;
  gid?: number;
  obj?: string;
  summ?: { size?: number; files?: number };
}

export function dirEntryFrom(raw: RawDirEntry): KopiaDirEntry {
  const mode = raw.mode ? Number.parseInt(raw.mode, 8) : 0;
  if (Number.isNaN(mode)) throw new RepositoryCorruptError(`directory entry ${raw.name ?? ''} has mode ${raw.mode}`);
  return {
    name: raw.name ?? '',
    type: raw.type ?? '',
    mode: unixMode(mode),
    size: raw.size ?? 0,
    mtimeNs: timeToNs(raw.mtime),
    uid: raw.uid ?? 0,
    gid: raw.gid ?? 0,
    ...(raw.obj ? { object: parseObjectId(raw.obj) } : {}),
    ...(raw.summ ? { summary: { totalFileSize: raw.summ.size ?? 0, totalFileCount: raw.summ.files ?? 0 } } : {}),
  };
}

export function snapshotFrom(entry: ManifestEntry): KopiaSnapshot {
  const d = (entry.data ?? {}) as {
    source?: { host?: string; userName?: string; path?: string };
    description?: string;
    startTime?: string;
    endTime?: string;
    incomplete?: string;
    tags?: Record<string, string>;
    rootEntry?: RawDirEntry;
  };
  if (!d.rootEntry) throw new RepositoryCorruptError(`snapshot ${entry.id} has no root entry`);
  return {
    id: entry.id,
    source: { host: d.source?.host ?? '', userName: d.source?.userName ?? '', path: d.source?.path ?? '' },
    description: d.description ?? '',
    startTime: d.startTime ?? '',
    endTime: d.endTime ?? '',
    ...(d.incomplete ? { incomplete: d.incomplete } : {}),
    tags: d.tags ?? {},
    root: dirEntryFrom(d.rootEntry),
  };
}

export function findSnapshot(manifests: Map<string, ManifestEntry>, id: string): KopiaSnapshot {
  const entry = manifests.get(id);
  if (!entry || entry.labels.type !== 'snapshot') throw new SnapshotNotFoundError(`snapshot ${id} not found in the kopia repository`);
  return snapshotFrom(entry);
}

/** The entries of a directory object. */
export async function readDirectory(objects: KopiaObjects, id: ObjectId, signal?: AbortSignal): Promise<KopiaDirEntry[]> {
  const raw = await objects.read(id, signal);
  let parsed: { entries?: RawDirEntry[] };
  try {
    parsed = JSON.parse(raw.toString('utf8')) as { entries?: RawDirEntry[] };
  } catch (err) {
    throw new RepositoryCorruptError(`directory ${id.contentId} is not JSON: ${(err as Error).message}`);
  }
  return (parsed.entries ?? []).map(dirEntryFrom);
}
