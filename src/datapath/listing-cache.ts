/**
 * A local cache of the last backup of a source: for every directory, a signature of what lstat said of its entries
 * and the tree blob IDs its listing was stored as.
 *
 * Why: an unchanged re-run otherwise reads, decrypts, checks and parses every directory's listing in the parent
 * snapshot, then builds, hashes and looks up the same listing again: most of its CPU on a tree of many small
 * directories. With the cache, a directory whose entries lstat the same as last time (name, mode, owner, size, mtime,
 * ctime, inode, link count) and whose subdirectories came out as the same listings is stored as the same listing,
 * without reading or writing one. restic and kopia keep a local cache for the same reason.
 *
 * It is only a shortcut to what the parent snapshot holds: it is used only when the parent snapshot is the very one
 * it was written for (same repository, source, exclude patterns and listing format), and every tree blob it names
 * must be in the repository's index. Anything else (no file, another snapshot, unreadable or malformed) means no
 * cache: the backup compares with the parent's listings as before. A directory where anything was reported (an
 * unreadable or vanished entry, a skipped socket or device) or that holds hard-linked files is recorded without a
 * signature, so it is walked in full every time and its reports repeat. The file holds directory names and blob IDs
 * (keyed hashes, which say nothing of contents), no file contents; it is written owner-only. A cache file no backup
 * has written for 30 days is removed by the next backup that saves one.
 *
 * It also lists, per directory, the large files (those the chunk worker reads) with the lstat fields their entries in
 * the snapshot were made from: a backup lstats them first and starts reading the ones that changed before its walk
 * reaches them (uploader.ts, "read ahead"), so a large changed file late in the walk does not keep the walk's end
 * waiting. So the file also holds those files' names, sizes, times and inode numbers (still nothing of contents).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { BlobId, SnapshotId } from './ids.js';
import type { EntryStat } from './scan-ahead.js';
import { CHANGE_FIELDS, writeChangeFields } from './stat-fields.js';

/** Bumped whenever the uploader builds listings differently: a cache of another format is not used. */
const LISTING_FORMAT = 1;
const FILE_VERSION = 2;

/** What a cache file belongs to; all of it must match for the cache to be used. */
export interface ListingCacheScope {
  /** Directory holding the cache files (cairn's cache directory). */
  dir: string;
  repositoryId: string;
  /** The backed-up source: its absolute path, or the key its backups are kept under (BackupOptions.cacheKey). */
  source: string;
  excludes: readonly string[];
}

export interface CachedListing {
  /** Signature of the directory's entries (entriesSignature); empty when it must be walked in full. */
  sig: string;
  /** The listing's tree blob IDs in the snapshot the cache was written for. */
  sub: BlobId[];
  /** The directory's large files, as their entries in that snapshot describe them. */
  large?: LargeFileRecord[];
}

/** A large file of a directory: its name and the lstat fields its snapshot entry was made from (decimal text). */
export type LargeFileRecord = [name: string, size: string, mtimeNs: string, ctimeNs: string, ino: string];

/** A large file of the parent snapshot, by its path relative to the source. */
export interface LargeFile {
  rel: string;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
}

interface CacheFile {
  v: number;
  format: number;
  repository: string;
  source: string;
  excludes: string[];
  snapshot: string;
  /** [relative path, signature, ...tree blob IDs] per directory; "" is the source itself. */
  dirs: [string, string, ...string[]][];
  /** Large files per directory (relative path), for directories that hold any. */
  large?: Record<string, LargeFileRecord[]>;
}

/** cairn's cache directory: $XDG_CACHE_HOME/cairn, else ~/.cache/cairn. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'cairn');
}

function cacheFile(scope: ListingCacheScope): string {
  const name = createHash('sha256').update(scope.source).digest('hex').slice(0, 32);
  return join(scope.dir, 'listings', scope.repositoryId, `${name}.json`);
}

/**
 * The signature of a directory's entries: every lstat field its listing is made of, and those that tell a changed
 * file from an unchanged one. `stats[i]` belongs to `names[i]`.
 */
export function entriesSignature(names: readonly string[], stats: readonly EntryStat[]): string {
  // The fields go into a typed array (a bigint store there allocates nothing), names joined by NUL (which no name
  // holds), each hashed in one call: decimal text or Buffer's bigint writes cost more than the hashing itself.
  if (signatureFields.length < names.length * CHANGE_FIELDS) signatureFields = new BigInt64Array(2 * names.length * CHANGE_FIELDS);
  const f = signatureFields;
  for (let i = 0, at = 0; i < names.length; i++, at += CHANGE_FIELDS) writeChangeFields(f, at, stats[i]!);
  return createHash('sha256')
    .update(names.join('\0'))
    .update(new Uint8Array(f.buffer, 0, names.length * CHANGE_FIELDS * 8))
    .digest('base64url')
    .slice(0, 24);
}

/** Reused from one directory to the next (the walk signs one directory at a time, on one thread). */
let signatureFields = new BigInt64Array(1024 * CHANGE_FIELDS);

export class ListingCache {
  private readonly next = new Map<string, CachedListing>();

  private constructor(
    private readonly scope: ListingCacheScope,
    /** The parent snapshot's directories, when the cache on disk was written for it. */
    private readonly previous: Map<string, CachedListing> | undefined,
  ) {}

  /**
   * Reads the cache of `scope` for a backup whose parent snapshot is `parent` (undefined: none). `known` tells
   * whether a tree blob is in the repository's index.
   */
  static open(scope: ListingCacheScope, parent: { id: SnapshotId; tree: readonly BlobId[] } | undefined, known: (id: BlobId) => boolean): ListingCache {
    const previous = parent ? readPrevious(scope, parent.id, known) : undefined;
    const root = previous?.get('');
    return new ListingCache(scope, root && sameIds(root.sub, parent!.tree) ? previous : undefined);
  }

  /** True when the cache describes the parent snapshot (so its listings need not be read ahead). */
  get usable(): boolean {
    return this.previous !== undefined;
  }

  /** The parent snapshot's directory at `rel`, as the cache knows it. */
  get(rel: string): CachedListing | undefined {
    return this.previous?.get(rel);
  }

  /** The parent snapshot's large files, in the order their directories were stored. */
  largeFiles(): LargeFile[] {
    const files: LargeFile[] = [];
    for (const [dir, c] of this.previous ?? []) {
      for (const [name, size, mtimeNs, ctimeNs, ino] of c.large ?? []) {
        files.push({ rel: dir ? `${dir}/${name}` : name, size: BigInt(size), mtimeNs: BigInt(mtimeNs), ctimeNs: BigInt(ctimeNs), ino: BigInt(ino) });
      }
    }
    return files;
  }

  /** Notes how this backup stored the directory at `rel`, and its large files. */
  record(rel: string, sig: string, sub: BlobId[], large?: LargeFileRecord[]): void {
    this.next.set(rel, large && large.length > 0 ? { sig, sub, large } : { sig, sub });
  }

  /** Writes what this backup recorded, for the next backup whose parent is `snapshot`. */
  save(snapshot: SnapshotId): void {
    const file = cacheFile(this.scope);
    const body: CacheFile = {
      v: FILE_VERSION,
      format: LISTING_FORMAT,
      repository: this.scope.repositoryId,
      source: this.scope.source,
      excludes: [...this.scope.excludes],
      snapshot,
      dirs: [...this.next].map(([rel, c]) => [rel, c.sig, ...c.sub]),
      large: Object.fromEntries([...this.next].filter(([, c]) => c.large).map(([rel, c]) => [rel, c.large!])),
    };
    mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(body), { mode: 0o600 });
    renameSync(tmp, file);
    removeExpired(join(this.scope.dir, 'listings'), Date.now() - EXPIRES_AFTER_MS);
  }
}

/** A cache file no backup has written for this long belongs to a source or repository gone (restic's rule too). */
const EXPIRES_AFTER_MS = 30 * 24 * 3600 * 1000;

/** Removes cache files (and then empty repository directories) last written before `before`. */
export function removeExpired(listings: string, before: number): void {
  for (const repo of readdirSync(listings, { withFileTypes: true })) {
    if (!repo.isDirectory()) continue;
    const dir = join(listings, repo.name);
    let left = 0;
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      try {
        if (statSync(path).mtimeMs < before) rmSync(path, { force: true });
        else left++;
      } catch {
        left++; // another backup's, just renamed or removed: leave it to that one
      }
    }
    if (left === 0) rmSync(dir, { recursive: true, force: true });
  }
}

export function sameIds(a: readonly BlobId[], b: readonly BlobId[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

function readPrevious(scope: ListingCacheScope, parent: SnapshotId, known: (id: BlobId) => boolean): Map<string, CachedListing> | undefined {
  let body: CacheFile;
  try {
    body = JSON.parse(readFileSync(cacheFile(scope), 'utf8')) as CacheFile;
  } catch {
    return undefined;
  }
  const matches =
    body.v === FILE_VERSION &&
    body.format === LISTING_FORMAT &&
    body.repository === scope.repositoryId &&
    body.source === scope.source &&
    body.snapshot === parent &&
    Array.isArray(body.excludes) &&
    JSON.stringify(body.excludes) === JSON.stringify(scope.excludes) &&
    Array.isArray(body.dirs);
  if (!matches) return undefined;
  const dirs = new Map<string, CachedListing>();
  for (const row of body.dirs) {
    if (!Array.isArray(row) || row.length < 3 || !row.every((s) => typeof s === 'string')) return undefined;
    const [rel, sig, ...sub] = row;
    if (!sub.every((id) => known(id as BlobId))) return undefined;
    dirs.set(rel, { sig, sub: sub as BlobId[] });
  }
  // Large files are only a hint for reading ahead: a malformed list is dropped, the listings are still used.
  if (body.large && typeof body.large === 'object') {
    for (const [rel, files] of Object.entries(body.large)) {
      const dir = dirs.get(rel);
      if (dir && Array.isArray(files) && files.every(isLargeFileRecord)) dir.large = files;
    }
  }
  return dirs;
}

const DECIMAL = /^\d{1,20}$/;

/** A well-formed record whose name is a plain name in its directory (never a path out of it). */
function isLargeFileRecord(r: unknown): r is LargeFileRecord {
  if (!Array.isArray(r) || r.length !== 5) return false;
  const name: unknown = r[0];
  if (typeof name !== 'string' || name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) return false;
  return r.slice(1).every((v) => typeof v === 'string' && DECIMAL.test(v));
}
