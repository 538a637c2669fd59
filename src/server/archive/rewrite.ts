/**
 * Rewrites a stored backup tarball once the backup's asynchronous operations are done, as Velero's finalizer does:
 * items the operations changed are replaced (both the plain path and the `<version>-preferredversion/` copy) and
 * items made by them are added. The tarball is streamed entry by entry into a new temporary file (never held in
 * memory); entries are otherwise copied as they are, in their order. Running it twice gives the same content:
 * an added item that is already there is replaced, not duplicated.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { extract, pack as tarPack } from 'tar-stream';
import { itemPath, parseItemPath, type ItemPath } from './paths.js';
import { ARCHIVE_FILE_MODE, type ArchiveItem } from './writer.js';

export interface RewriteOptions {
  /** Returns the new object for an item (the stored one parsed), or undefined to keep the entry as it is. */
  replace?: (item: ItemPath, object: unknown) => unknown;
  /** Items to add (replacing entries of the same path). */
  add?: readonly ArchiveItem[];
  tmpDir?: string;
  now?: () => Date;
}

export interface RewrittenArchive {
  path: string;
  size: number;
  /** Opens the new tarball for upload. */
  open(): Readable;
  /** Removes the temporary file. */
  dispose(): Promise<void>;
}

/** The entry paths of an item: plain and preferred-version copy. */
function pathsOf(item: ArchiveItem): string[] {
  const base = { groupResource: item.groupResource, name: item.name, ...(item.namespace ? { namespace: item.namespace } : {}) };
  return [itemPath(base), itemPath({ ...base, preferredVersion: item.version })];
}

export async function rewriteArchive(input: Readable, opts: RewriteOptions): Promise<RewrittenArchive> {
  const dir = await mkdtemp(join(opts.tmpDir ?? tmpdir(), 'cairn-rewrite-'));
  const path = join(dir, 'backup.tar.gz');
  const now = opts.now ?? (() => new Date());
  const added = new Map<string, Buffer>();
  for (const item of opts.add ?? []) {
    const body = Buffer.from(JSON.stringify(item.object));
    for (const p of pathsOf(item)) added.set(p, body);
  }
  try {
    const source = extract();
    const out = tarPack();
    const written = pipeline(out, createGzip(), createWriteStream(path));
    const put = (name: string, body: Buffer, mtime?: Date) =>
      new Promise<void>((resolve, reject) => {
        out.entry({ name, size: body.byteLength, mode: ARCHIVE_FILE_MODE, type: 'file', mtime: mtime ?? now() }, body, (err) => (err ? reject(err) : resolve()));
      });
    const copy = (async () => {
      for await (const entry of source) {
        const { name, type, mtime } = entry.header;
        const chunks: Buffer[] = [];
        for await (const c of entry) chunks.push(c as Buffer);
        if (type !== 'file' || added.has(name)) continue;
        let body = Buffer.concat(chunks);
        const parsed = opts.replace ? parseItemPath(name) : undefined;
        if (parsed && opts.replace) {
          const next = opts.replace(parsed, JSON.parse(body.toString('utf8')) as unknown);
          if (next !== undefined) body = Buffer.from(JSON.stringify(next));
        }
        await put(name, body, mtime);
      }
      for (const [name, body] of added) await put(name, body);
      out.finalize();
    })();
    await Promise.all([pipeline(input, createGunzip(), source), copy, written]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const { size } = await stat(path);
  return { path, size, open: () => createReadStream(path), dispose: () => rm(dir, { recursive: true, force: true }) };
}
