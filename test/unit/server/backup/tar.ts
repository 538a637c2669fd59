/** Reads a gzip'd tarball into entries (name, mode, type, body) in archive order. */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';

export interface TarEntry {
  name: string;
  mode: number;
  type: string;
  body: string;
}

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
