/**
 * The low-level writes of a restore, shared by cairn's own restorer and the kopia reader's: whole writes at an
 * offset, sparse writes that leave all-zero 4 KiB blocks as holes, and the asynchronous open and rename a file's
 * creation runs on the thread pool.
 */
import { closeSync, constants as fsc, open, openSync, rename, rmSync, writeSync } from 'node:fs';
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

/** Create a file that must not exist yet, for writing (a symlink at the name is not followed: it exists). */
export const CREATE_NEW = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL;

/**
 * Creates `path` for writing, or answers undefined when something is already there: a restored file that is new is
 * written under its own name, one that replaces an existing entry goes through its temporary name.
 */
export function openNewSync(path: string, mode: number): number | undefined {
  try {
    return openSync(path, CREATE_NEW, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw err;
  }
}

/** The temporary name a file is written under, beside its final path, until it is complete. */
export function restoreTempPath(abs: string): string {
  return join(dirname(abs), `.${basename(abs)}.${randomBytes(4).toString('hex')}.cairn-restore`);
}

/**
 * Restores one file: creates it with `createMode`, lets `write` fill it and set its attributes on the open descriptor
 * (`written` is the path being written), then closes it. A file that does not exist yet is written under its own
 * name, as restic and kopia write by default (one rename and one directory entry fewer per file); one that exists
 * (a file, a directory, a symlink) is replaced whole through a temporary name renamed into place, so an existing file
 * is never seen half-written. Returns what `write` returned (the file's size). On any failure the descriptor is
 * closed and the file being written removed, so no partial file is left.
 */
export async function writeRestoredFile(abs: string, createMode: number, write: (fd: number, written: string) => Promise<number>): Promise<number> {
  // Creating a file is the one step that can wait on the filesystem journal or directory locks (milliseconds on a
  // busy disk): it runs on the thread pool so several creations overlap; the rest stays synchronous.
  let written = abs;
  let fd: number | undefined = await openAsync(abs, CREATE_NEW, createMode).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return undefined;
  });
  if (fd === undefined) {
    written = restoreTempPath(abs);
    fd = await openAsync(written, CREATE_NEW, createMode);
  }
  let ok = false;
  try {
    const size = await write(fd, written);
    closeSync(fd);
    fd = undefined;
    if (written !== abs) await renameAsync(written, abs);
    ok = true;
    return size;
  } finally {
    if (!ok) {
      if (fd !== undefined) closeSync(fd);
      rmSync(written, { force: true });
    }
  }
}
