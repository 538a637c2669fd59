/** Gzip'd tarballs in tests: a backup's contents read back, or made up as a stored backup's. */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { createGunzip, createGzip } from 'node:zlib';
import { extract, pack } from 'tar-stream';

export interface TarEntry {
  name: string;
  mode: number;
  type: string;
  body: string;
}

/** Reads a gzip'd tarball into entries (name, mode, type, body) in archive order. */
export async function readTarGz(source: string | Buffer): Promise<TarEntry[]> {
  const input = typeof source === 'string' ? createReadStream(source) : Readable.from([source]);
  const ex = extract();
  input.pipe(createGunzip()).pipe(ex);
  const entries: TarEntry[] = [];
  for await (const entry of ex) {
    const chunks: Buffer[] = [];
    for await (const c of entry) chunks.push(c as Buffer);
    entries.push({ name: entry.header.name, mode: entry.header.mode ?? 0, type: entry.header.type ?? '', body: Buffer.concat(chunks).toString('utf8') });
  }
  return entries;
}

/** A gzip'd tarball of regular files (mode 0644), in the given order. */
export async function writeTarGz(files: { path: string; body: string }[]): Promise<Buffer> {
  const tar = pack();
  const out = buffer(tar.pipe(createGzip()));
  for (const f of files) tar.entry({ name: f.path, mode: 0o644 }, f.body);
  tar.finalize();
  return out;
}
