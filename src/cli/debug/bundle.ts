/**
 * Writes the debug bundle: a gzip'd tar of regular files under one top folder (`cairn-bundle/`, as Velero's is under
 * `velero-bundle/`), mode 0644. It is written to `FILE.partial` and renamed at the end, so an interrupted run never
 * leaves a truncated bundle under the asked name.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack as tarPack } from 'tar-stream';

export const BUNDLE_ROOT = 'cairn-bundle';

export interface BundleEntry {
  /** Path inside the bundle folder, `/`-separated, e.g. `logs/server/velero-7d9f-abcde/velero.log`. */
  path: string;
  content: string | Buffer;
}

export async function writeBundle(file: string, entries: readonly BundleEntry[], mtime: Date): Promise<void> {
  const partial = `${file}.partial`;
  const pack = tarPack();
  const written = pipeline(pack, createGzip(), createWriteStream(partial, { mode: 0o600 }));
  try {
    for (const entry of entries) {
      const body = typeof entry.content === 'string' ? Buffer.from(entry.content, 'utf8') : entry.content;
      await new Promise<void>((resolve, reject) => {
        pack.entry({ name: `${BUNDLE_ROOT}/${entry.path}`, mode: 0o644, mtime, size: body.length, type: 'file' }, body, (err) => (err ? reject(err) : resolve()));
      });
    }
    pack.finalize();
    await written;
    await rename(partial, file);
  } catch (err) {
    pack.destroy();
    await written.catch(() => undefined);
    await rm(partial, { force: true });
    throw err;
  }
}

/** A name safe as one path segment in the bundle (object and pod names already are; this guards the rest). */
export function segment(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, '_');
  return safe === '' || safe === '.' || safe === '..' ? '_' : safe;
}

/** Velero's default name, `bundle-YYYY-MM-DD-HH-MM-SS.tar.gz` (cairn's timestamp is UTC). */
export function defaultBundleName(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const d = `${now.getUTCFullYear()}-${p(now.getUTCMonth() + 1)}-${p(now.getUTCDate())}-${p(now.getUTCHours())}-${p(now.getUTCMinutes())}-${p(now.getUTCSeconds())}`;
  return `bundle-${d}.tar.gz`;
}
