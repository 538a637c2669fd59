/**
 * The low-level writes of a restore, shared by cairn's own restorer and the kopia reader's: whole writes at an
 * offset, sparse writes that leave all-zero 4 KiB blocks as holes, and the asynchronous open and rename a file's
 * creation runs on the thread pool.
 */
import { closeSync, constants as fsc, open, rename, rmSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

const BLOCK = 4096;
const ZERO_BLOCK = Buffer.alloc(BLOCK);

export function writeAllSync(fd: number, data: Buffer, from: number, to: number, pos: number): void {
  let done = from;
  while (done < to) done += writeSync(fd, data, done, to - done, pos + done - from);
}

/** Writes a chunk at pos; when sparse, skips 4 KiB blocks (aligned to the file) that are all zero. */
export function writeChunkSync(fd: number, data: Buffer, pos: number, sparse: boolean): void {
  if (!sparse) return writeAllSync(fd, data, 0, data.length, pos);
  let runStart = -1;
  const firstBoundary = (BLOCK - (pos % BLOCK)) % BLOCK;
  const edges: number[] = [0];
  for (let b = firstBoundary; b < data.length; b += BLOCK) if (b > 0) edges.push(b);
  edges.push(data.length);
  for (let k = 0; k + 1 < edges.length; k++) {
    const from = edges[k]!;
    const to = edges[k + 1]!;
    const zero = to - from === BLOCK && data.subarray(from, to).equals(ZERO_BLOCK);
    if (!zero && runStart < 0) runStart = from;
    if (zero && runStart >= 0) {
      writeAllSync(fd, data, runStart, from, pos + runStart);
      runStart = -1;
    }
  }
  if (runStart >= 0) writeAllSync(fd, data, runStart, data.length, pos + runStart);
}

/** "EACCES: permission denied" from a Node errno error (without the path Node appends), or the message. */
export function errnoReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const head = (e.message ?? String(err)).split(',')[0]!;
  return e.code && !head.startsWith(e.code) ? `${e.code}: ${head}` : head;
}

export function renameAsync(from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => rename(from, to, (err) => (err ? reject(err) : resolve())));
}

export function openAsync(path: string, flags: number, mode: number): Promise<number> {
  return new Promise((resolve, reject) => open(path, flags, mode, (err, fd) => (err ? reject(err) : resolve(fd))));
}

/** The temporary name a file is written under, beside its final path, until it is complete. */
export function restoreTempPath(abs: string): string {
  return join(dirname(abs), `.${basename(abs)}.${randomBytes(4).toString('hex')}.cairn-restore`);
}

/**
 * Restores one file through a temporary name: creates it with `createMode`, lets `write` fill it and set its
 * attributes on the open descriptor, then closes it and renames it into place. Returns what `write` returned (the
 * file's size). On any failure the descriptor is closed and the temporary file removed, so no partial file is left.
 */
export async function writeFileViaTemp(abs: string, createMode: number, write: (fd: number, tmp: string) => Promise<number>): Promise<number> {
  const tmp = restoreTempPath(abs);
  // Creating a file is the one step that can wait on the filesystem journal or directory locks (milliseconds on a
  // busy disk): it runs on the thread pool so several creations overlap; the rest stays synchronous.
  let fd: number | undefined = await openAsync(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, createMode);
  let ok = false;
  try {
    const size = await write(fd, tmp);
    closeSync(fd);
    fd = undefined;
    await renameAsync(tmp, abs);
    ok = true;
    return size;
  } finally {
    if (!ok) {
      if (fd !== undefined) closeSync(fd);
      rmSync(tmp, { force: true });
    }
  }
}
