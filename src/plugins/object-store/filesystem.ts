/**
 * Filesystem object store: one file per object under a root directory, keys map to relative paths.
 *
 * Atomic writes: the body goes to a hidden temp file in the destination directory (`.<name>.<random>.cairn-tmp`),
 * which is fsynced, renamed over the final name, and then the directory is fsynced. A reader therefore sees the old
 * object or the whole new one; after a crash an object that was reported written is on disk. `durability: 'none'` skips
 * both fsyncs (tests, scratch repositories). Temp files left by a crash are never listed.
 */
import { closeSync, openSync, readSync, promises as fsp, constants as fsc } from 'node:fs';
import { join, dirname, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { GetOptions, ObjectInfo, ObjectStore, PutOptions } from './types.js';
import { ObjectNotFoundError, ObjectStoreError } from './errors.js';

const TMP_SUFFIX = '.cairn-tmp';

export interface FilesystemStoreOptions {
  root: string;
  durability?: 'fsync' | 'none';
}

export class FilesystemObjectStore implements ObjectStore {
  readonly description: string;
  private readonly root: string;
  private readonly fsync: boolean;

  constructor(options: FilesystemStoreOptions) {
    this.root = options.root;
    this.fsync = (options.durability ?? 'fsync') === 'fsync';
    this.description = `file://${options.root}`;
  }

  private pathOf(key: string): string {
    if (key === '' || key.startsWith('/') || key.split('/').some((s) => s === '..' || s === '.' || s === '') || key.includes(sep + sep)) {
      throw new ObjectStoreError(`invalid object key ${JSON.stringify(key)}`, { retryable: false });
    }
    return join(this.root, key);
  }

  /**
   * Ranged reads keep a few read-only descriptors open (a restore reads thousands of ranges from the same packs);
   * put/delete through this store drop the cached descriptor, and idle ones are closed after a second. Whole-object
   * reads always open afresh.
   */
  private readonly rangeFds = new Map<string, { fd: number; used: number }>();
  private sweeper: NodeJS.Timeout | undefined;

  private dropFd(path: string): void {
    const held = this.rangeFds.get(path);
    if (!held) return;
    this.rangeFds.delete(path);
    closeSync(held.fd);
  }

  private rangeFd(path: string, key: string): number {
    const held = this.rangeFds.get(path);
    if (held) {
      held.used = Date.now();
      return held.fd;
    }
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (err) {
      throw mapError(err, key);
    }
    if (this.rangeFds.size >= 32) this.dropFd(this.rangeFds.keys().next().value!);
    this.rangeFds.set(path, { fd, used: Date.now() });
    this.sweeper ??= setInterval(() => {
      const cutoff = Date.now() - 1000;
      for (const [p, h] of this.rangeFds) if (h.used < cutoff) this.dropFd(p);
      if (this.rangeFds.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, 1000).unref();
    return fd;
  }

  async get(key: string, options: GetOptions = {}): Promise<Buffer> {
    const path = this.pathOf(key);
    if (options.range) {
      // Synchronous positional reads: page-cache hits cost microseconds, less than a thread-pool round trip.
      const { offset, length } = options.range;
      const fd = this.rangeFd(path, key);
      const buf = options.target && options.target.length >= length ? options.target.subarray(0, length) : Buffer.allocUnsafe(length);
      let done = 0;
      try {
        while (done < length) {
          const n = readSync(fd, buf, done, length - done, offset + done);
          if (n === 0) throw new ObjectStoreError(`object ${key} is shorter than the range ${offset}+${length}`, { retryable: false });
          done += n;
        }
      } catch (err) {
        this.dropFd(path);
        throw mapError(err, key);
      }
      return buf;
    }
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(path, 'r');
    } catch (err) {
      throw mapError(err, key);
    }
    try {
      if (!options.range) return await fh.readFile();
      const { offset, length } = options.range;
      const buf = Buffer.allocUnsafe(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await fh.read(buf, done, length - done, offset + done);
        if (bytesRead === 0) throw new ObjectStoreError(`object ${key} is shorter than the range ${offset}+${length}`, { retryable: false });
        done += bytesRead;
      }
      return buf;
    } finally {
      await fh.close();
    }
  }

  async getStream(key: string): Promise<Readable> {
    const path = this.pathOf(key);
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(path, 'r');
    } catch (err) {
      throw mapError(err, key);
    }
    return fh.createReadStream({ autoClose: true, highWaterMark: 1 << 20 });
  }

  async put(key: string, body: Buffer | Readable, options: PutOptions = {}): Promise<void> {
    const path = this.pathOf(key);
    const dir = dirname(path);
    const name = path.slice(dir.length + 1);
    const tmp = join(dir, `.${name}.${randomBytes(6).toString('hex')}${TMP_SUFFIX}`);
    this.dropFd(path);
    try {
      const fh = await openInFreshDir(dir, tmp);
      if (Buffer.isBuffer(body)) {
        try {
          let done = 0;
          while (done < body.length) {
            const { bytesWritten } = await fh.write(body, done, body.length - done);
            done += bytesWritten;
          }
          if (this.fsync) await fh.sync();
        } finally {
          await fh.close();
        }
      } else {
        const out = fh.createWriteStream({ flush: this.fsync });
        await pipeline(body, out, { signal: options.signal });
      }
      options.signal?.throwIfAborted();
      await fsp.rename(tmp, path);
      if (this.fsync) await syncDir(dir);
    } catch (err) {
      await fsp.rm(tmp, { force: true }).catch(() => undefined);
      throw mapError(err, key);
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const st = await fsp.stat(this.pathOf(key));
      return st.isFile() ? { key, size: st.size, lastModified: st.mtime } : undefined;
    } catch (err) {
      const mapped = mapError(err, key);
      if (mapped instanceof ObjectNotFoundError) return undefined;
      throw mapped;
    }
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    const slash = prefix.lastIndexOf('/');
    const base = slash < 0 ? '' : prefix.slice(0, slash + 1);
    yield* this.walk(base, prefix);
  }

  /** Depth-first walk of one directory, in global key order: a directory sorts as its name plus '/'. */
  private async *walk(dirKey: string, prefix: string): AsyncIterable<ObjectInfo> {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fsp.readdir(dirKey === '' ? this.root : join(this.root, dirKey), { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return;
      throw mapError(err, dirKey);
    }
    const items = entries
      .filter((e) => !e.name.endsWith(TMP_SUFFIX) && (e.isDirectory() || e.isFile()))
      .map((e) => ({ key: dirKey + e.name + (e.isDirectory() ? '/' : ''), dir: e.isDirectory() }))
      .filter((e) => (e.dir ? e.key.startsWith(prefix) || prefix.startsWith(e.key) : e.key.startsWith(prefix)))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (const item of items) {
      if (item.dir) {
        yield* this.walk(item.key, prefix);
      } else {
        try {
          const st = await fsp.stat(join(this.root, item.key));
          yield { key: item.key, size: st.size, lastModified: st.mtime };
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw mapError(err, item.key);
        }
      }
    }
  }

  async listCommonPrefixes(prefix: string, delimiter = '/'): Promise<string[]> {
    return commonPrefixesByListing(this, prefix, delimiter);
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    this.dropFd(path);
    try {
      await fsp.unlink(path);
    } catch (err) {
      const mapped = mapError(err, key);
      if (!(mapped instanceof ObjectNotFoundError)) throw mapped;
    }
    await this.pruneEmptyDirs(dirname(path));
  }

  /**
   * Removes `dir` and its parents up to (not including) the root while they are empty, so deleting every object under
   * a prefix (a backup's `backups/<name>/`) leaves no directory behind, as on an object store. A put racing this
   * recreates its directory (openInFreshDir).
   */
  private async pruneEmptyDirs(dir: string): Promise<void> {
    const root = this.root.replace(/\/+$/, '');
    for (let d = dir; d.startsWith(root + sep) && d !== root; d = dirname(d)) {
      try {
        await fsp.rmdir(d);
      } catch {
        return; // not empty (ENOTEMPTY/EEXIST), already gone, or not ours to remove: stop climbing
      }
    }
  }
}

/** Common prefixes computed from a full listing; fine for backends without a native delimiter query. */
export async function commonPrefixesByListing(store: ObjectStore, prefix: string, delimiter: string): Promise<string[]> {
  const out: string[] = [];
  for await (const { key } of store.list(prefix)) {
    const at = key.indexOf(delimiter, prefix.length);
    if (at < 0) continue;
    const p = key.slice(0, at + delimiter.length);
    if (out[out.length - 1] !== p) out.push(p);
  }
  return out;
}

/**
 * Creates `dir` (with parents) and opens a new file `path` in it. A concurrent delete may prune the directory
 * between the two steps (it was empty then), so a missing directory is created again a few times.
 */
async function openInFreshDir(dir: string, path: string): Promise<fsp.FileHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      // Recursive mkdir itself reports ENOENT when a directory it just found is removed under it.
      await fsp.mkdir(dir, { recursive: true });
      return await fsp.open(path, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw err;
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function mapError(err: unknown, key: string): Error {
  if (err instanceof ObjectStoreError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return new ObjectNotFoundError(key);
  if ((err as Error).name === 'AbortError') return err as Error;
  const retryable = code === 'EAGAIN' || code === 'EBUSY' || code === 'EMFILE' || code === 'ENFILE';
  return new ObjectStoreError(`filesystem store: ${code ?? 'error'} on ${key}: ${(err as Error).message}`, { retryable, cause: err });
}
