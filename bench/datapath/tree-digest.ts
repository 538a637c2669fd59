// Verifies a restore: a digest over every entry below a root (relative path, type, permission bits, size, SHA-256
// of the bytes, symlink target), walked in sorted order. Times and owners are not compared.
import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readlinkSync, readSync } from 'node:fs';
import { join } from 'node:path';

export interface TreeEntry {
  path: string;
  kind: 'file' | 'dir' | 'symlink' | 'other';
  mode: number;
  size: number;
  /** SHA-256 of the bytes (files) or the link target (symlinks); empty for directories. */
  content: string;
}

export interface TreeDigest {
  sha256: string;
  files: number;
  dirs: number;
  bytes: number;
}

const readBuffer = Buffer.allocUnsafe(1024 * 1024);

function hashFile(path: string): string {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    for (;;) {
      const n = readSync(fd, readBuffer, 0, readBuffer.length, null);
      if (n === 0) break;
      hash.update(readBuffer.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** Every entry below root (root itself excluded), depth first, names in byte order. */
export function* walkTree(root: string, rel = ''): Generator<TreeEntry> {
  const names = readdirSync(join(root, rel)).sort();
  for (const name of names) {
    const relPath = rel ? `${rel}/${name}` : name;
    const abs = join(root, relPath);
    const stat = lstatSync(abs);
    const mode = stat.mode & 0o7777;
    if (stat.isDirectory()) {
      yield { path: relPath, kind: 'dir', mode, size: 0, content: '' };
      yield* walkTree(root, relPath);
    } else if (stat.isFile()) {
      yield { path: relPath, kind: 'file', mode, size: stat.size, content: hashFile(abs) };
    } else if (stat.isSymbolicLink()) {
      yield { path: relPath, kind: 'symlink', mode: 0, size: 0, content: readlinkSync(abs) };
    } else {
      yield { path: relPath, kind: 'other', mode, size: 0, content: '' };
    }
  }
}

const entryLine = (e: TreeEntry): string => `${e.kind} ${e.mode.toString(8)} ${e.size} ${e.content} ${e.path}\n`;

export function digestTree(root: string): TreeDigest {
  const hash = createHash('sha256');
  let files = 0;
  let dirs = 0;
  let bytes = 0;
  for (const entry of walkTree(root)) {
    hash.update(entryLine(entry));
    if (entry.kind === 'file') {
      files++;
      bytes += entry.size;
    } else if (entry.kind === 'dir') dirs++;
  }
  return { sha256: hash.digest('hex'), files, dirs, bytes };
}

/** The first difference between two trees, or undefined when they match. For explaining a failed verification. */
export function firstDifference(expectedRoot: string, actualRoot: string): string | undefined {
  const expected = walkTree(expectedRoot);
  const actual = walkTree(actualRoot);
  for (;;) {
    const e = expected.next();
    const a = actual.next();
    if (e.done && a.done) return undefined;
    if (e.done) return `unexpected extra entry ${a.value?.path ?? ''}`;
    if (a.done) return `missing entry ${e.value.path}`;
    if (entryLine(e.value) !== entryLine(a.value)) {
      return e.value.path !== a.value.path
        ? `entry ${e.value.path} expected, found ${a.value.path}`
        : `${e.value.path} differs (expected ${entryLine(e.value).trim()}, found ${entryLine(a.value).trim()})`;
    }
  }
}
