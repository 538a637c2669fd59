/**
 * kopia's blob storage, read through one of cairn's object stores. kopia names every object of a repository by a
 * blob ID (`kopia.repository`, `p3f…`, `xn0_…`). On object stores (S3, GCS, Azure) a blob is the object
 * `<prefix><blob ID>`. On a filesystem kopia shards long IDs into directories and appends `.f`: with the shard
 * widths `[1,3]` (`.shards` at the repository root says so; repositories without `.shards` use `[3,3]`), blob
 * `p0123abcdef…` is the file `p/012/3abcdef….f`; IDs of at most `maxNonShardedLength` (20) characters are not
 * sharded (`kopia.repository.f`); kopia's `--flat` writes a `.shards` with no widths. This reader finds which
 * layout is in front of it from the files at the root. It only ever reads.
 */
import { isNotFound, type ObjectStore } from '../../plugins/object-store/index.js';

export interface BlobInfo {
  id: string;
  length: number;
  timestamp: Date;
}

/** How blob IDs map to keys. */
export type BlobLayout = { kind: 'flat' } | { kind: 'sharded'; shards: ShardParameters };

export interface ShardParameters {
  default: number[];
  maxNonShardedLength: number;
  overrides?: { prefix: string; shards: number[] }[];
}

const SHARD_SUFFIX = '.f';
const SHARDS_FILE = '.shards';
const FORMAT_BLOB = 'kopia.repository';
/** Shard widths of a filesystem repository that has no `.shards` file (kopia before the file existed). */
const LEGACY_SHARDS: ShardParameters = { default: [3, 3], maxNonShardedLength: 20 };

export class KopiaBlobStorage {
  private constructor(
    readonly store: ObjectStore,
    readonly layout: BlobLayout,
  ) {}

  /** Looks at the root of `store` and picks the layout: a flat object-store repository or a sharded filesystem one. */
  static async open(store: ObjectStore): Promise<KopiaBlobStorage | undefined> {
    if (await store.head(FORMAT_BLOB)) return new KopiaBlobStorage(store, { kind: 'flat' });
    if (!(await store.head(FORMAT_BLOB + SHARD_SUFFIX))) return undefined;
    let shards = LEGACY_SHARDS;
    try {
      shards = parseShardParameters(await store.get(SHARDS_FILE));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return new KopiaBlobStorage(store, { kind: 'sharded', shards });
  }

  /** Whether a kopia repository starts at the root of `store` (its format blob is there, in either layout). */
  static async holdsRepository(store: ObjectStore): Promise<boolean> {
    return (await store.head(FORMAT_BLOB)) !== undefined || (await store.head(FORMAT_BLOB + SHARD_SUFFIX)) !== undefined;
  }

  get description(): string {
    return this.store.description;
  }

  /** The object key of a blob. */
  keyOf(id: string): string {
    if (this.layout.kind === 'flat') return id;
    return shardedPath(this.layout.shards, id) + SHARD_SUFFIX;
  }

  /** A whole blob, or a byte range of it. Throws the store's not-found error when it does not exist. */
  get(id: string, range?: { offset: number; length: number }, signal?: AbortSignal): Promise<Buffer> {
    return this.store.get(this.keyOf(id), { ...(range ? { range } : {}), ...(signal ? { signal } : {}) });
  }

  /** Every blob whose ID starts with `prefix`. */
  async list(prefix: string, signal?: AbortSignal): Promise<BlobInfo[]> {
    const out: BlobInfo[] = [];
    if (this.layout.kind === 'flat') {
      for await (const o of this.store.list(prefix, signal ? { signal } : {})) out.push({ id: o.key, length: o.size, timestamp: o.lastModified });
      return out;
    }
    // Sharded: short IDs lie at the root and long ones under directories named by their first characters, so both
    // the root and the sharded path of the prefix are listed (one of them may hold the other; duplicates drop out).
    const found = new Map<string, BlobInfo>();
    const shards = this.layout.shards;
    for (const keyPrefix of new Set([prefix, shardedPrefix(shards, prefix)])) {
      for await (const o of this.store.list(keyPrefix, signal ? { signal } : {})) {
        if (!o.key.endsWith(SHARD_SUFFIX)) continue;
        const id = o.key.slice(0, -SHARD_SUFFIX.length).split('/').join('');
        if (id.startsWith(prefix) && shardedPath(shards, id) + SHARD_SUFFIX === o.key) found.set(id, { id, length: o.size, timestamp: o.lastModified });
      }
    }
    return [...found.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}

export function parseShardParameters(raw: Buffer): ShardParameters {
  const v = JSON.parse(raw.toString('utf8')) as { default?: unknown; maxNonShardedLength?: unknown; overrides?: unknown };
  const ints = (x: unknown): number[] => (Array.isArray(x) && x.every((n) => Number.isInteger(n) && (n as number) > 0) ? (x as number[]) : []);
  const overrides = Array.isArray(v.overrides)
    ? (v.overrides as { prefix?: unknown; shards?: unknown }[]).map((o) => ({ prefix: String(o.prefix ?? ''), shards: ints(o.shards) }))
    : [];
  return {
    default: ints(v.default),
    maxNonShardedLength: typeof v.maxNonShardedLength === 'number' ? v.maxNonShardedLength : LEGACY_SHARDS.maxNonShardedLength,
    ...(overrides.length ? { overrides } : {}),
  };
}

function shardsFor(p: ShardParameters, id: string): number[] {
  return p.overrides?.find((o) => id.startsWith(o.prefix))?.shards ?? p.default;
}

/** `p/012/3abc…` for blob `p0123abc…` (without the `.f`). */
export function shardedPath(p: ShardParameters, id: string): string {
  if (id.length <= p.maxNonShardedLength) return id;
  const parts: string[] = [];
  let rest = id;
  for (const size of shardsFor(p, id)) {
    if (rest.length <= size) break;
    parts.push(rest.slice(0, size));
    rest = rest.slice(size);
  }
  return [...parts, rest].join('/');
}

/** The key prefix under which every long blob ID starting with `prefix` lies (`x/n0_` for `xn0_` with `[1,3]`). */
function shardedPrefix(p: ShardParameters, prefix: string): string {
  const parts: string[] = [];
  let rest = prefix;
  for (const size of shardsFor(p, prefix)) {
    if (rest.length < size) break;
    parts.push(rest.slice(0, size));
    rest = rest.slice(size);
  }
  return [...parts, rest].join('/');
}
