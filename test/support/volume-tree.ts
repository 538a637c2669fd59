/**
 * What the end-to-end tests compare after a restore, read and written on the nodes' host paths as an operator with
 * node access would: a volume's tree (type, bytes, mode, owner, mtime per path) and a dataset of large random files,
 * many small ones in nested directories, odd modes, a non-root owner, set mtimes and a symlink.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The non-root owner some dataset files get (and OWNER + 1 as group on some). */
export const OWNER = 1234;
export const MiB = 1024 * 1024;

/** What a user compares after a restore: per relative path, the type, bytes (hash), mode, owner and mtime. */
export interface Entry {
  type: 'file' | 'dir' | 'symlink';
  mode: number;
  uid?: number;
  gid?: number;
  /** Modification time in nanoseconds (compared to the microsecond: see sameTimes). */
  mtimeNs?: bigint;
  size?: number;
  sha256?: string;
  target?: string;
}
export type Tree = Record<string, Entry>;

/**
 * Reads a volume's tree. `.velero` at the root is left out: the restore's done-marker directory, which restore-wait
 * removes when it may (running as a non-root user it often may not, and Velero then leaves it too).
 */
export function readTree(root: string): Tree {
  const tree: Tree = {};
  const walk = (rel: string) => {
    if (rel === '.velero') return;
    const path = rel ? join(root, rel) : root;
    const st = lstatSync(path, { bigint: true });
    const mtimeNs = st.mtimeNs;
    if (st.isSymbolicLink()) {
      // Symlink modes, owners and times are not portable across filesystems; the target is what matters.
      tree[rel] = { type: 'symlink', mode: 0, target: readlinkSync(path) };
      return;
    }
    const common = { mode: Number(st.mode & 0o7777n), uid: Number(st.uid), gid: Number(st.gid) };
    if (st.isDirectory()) {
      // The volume root's mtime changes when restore-wait removes its `.velero` marker directory, as in Velero.
      tree[rel || '.'] = { type: 'dir', ...common, ...(rel ? { mtimeNs } : {}) };
      for (const name of readdirSync(path).sort()) walk(rel ? `${rel}/${name}` : name);
      return;
    }
    tree[rel] = { type: 'file', ...common, mtimeNs, size: Number(st.size), sha256: createHash('sha256').update(readFileSync(path)).digest('hex') };
  };
  walk('');
  return tree;
}

/** The tree without times, for an exact comparison of everything else. */
export function withoutTimes(tree: Tree): Record<string, Omit<Entry, 'mtimeNs'>> {
  return Object.fromEntries(Object.entries(tree).map(([k, { mtimeNs: _t, ...rest }]) => [k, rest]));
}

/**
 * Paths whose restored mtime is more than a microsecond off. Node sets file times from a double number of seconds,
 * so the data path keeps them to the microsecond, not the nanosecond (a double holds today's time to ~0.24 µs).
 */
export function timeMismatches(expected: Tree, got: Tree): string[] {
  return Object.keys(expected).filter((k) => {
    const a = expected[k]?.mtimeNs;
    const b = got[k]?.mtimeNs;
    if (a === undefined || b === undefined) return a !== b;
    const diff = a > b ? a - b : b - a;
    return diff > 1500n;
  }).map((k) => `${k}: ${expected[k]?.mtimeNs ?? '-'} ns backed up, ${got[k]?.mtimeNs ?? '-'} ns restored`);
}

export function fileBytes(tree: Tree): number {
  return Object.values(tree).reduce((n, e) => n + (e.type === 'file' ? (e.size ?? 0) : 0), 0);
}

/** A fixed past time (with milliseconds) per path, so restored times are checked, not just "recent". */
export function timeFor(i: number): Date {
  return new Date(Date.UTC(2024, 0, 1) + i * 3_601_123);
}

const FILE_MODES = [0o644, 0o600, 0o640, 0o755, 0o444, 0o700, 0o664] as const;

/**
 * Writes the dataset into a volume's host directory: `large` MiB-sized random files, `small` files of 0-16 KiB in
 * nested directories, odd modes, owner 1234 on some, set mtimes (directories last, deepest first) and a symlink.
 */
export function writeDataset(root: string, opts: { large: number[]; small: number; seed: number }): void {
  const dirs: string[] = [];
  const mkdir = (rel: string, mode: number) => {
    mkdirSync(join(root, rel), { recursive: true });
    chmodSync(join(root, rel), mode);
    dirs.push(rel);
  };
  mkdir('big', 0o750);
  opts.large.forEach((mib, i) => {
    const p = join(root, 'big', `blob-${i}.bin`);
    writeFileSync(p, randomBytes(mib * MiB));
    chmodSync(p, 0o640);
    chownSync(p, OWNER, OWNER);
    utimesSync(p, timeFor(opts.seed + i), timeFor(opts.seed + i));
  });
  for (let i = 0; i < opts.small; i++) {
    const dir = `small/d${i % 20}/e${i % 3}`;
    if (!dirs.includes(dir)) {
      mkdir(`small/d${i % 20}`, 0o755);
      mkdir(dir, i % 2 ? 0o711 : 0o775);
    }
    const p = join(root, dir, `f${i}.txt`);
    const size = (i * 7919 + opts.seed) % (16 * 1024 + 1);
    writeFileSync(p, randomBytes(size).toString('base64').slice(0, size));
    chmodSync(p, FILE_MODES[i % FILE_MODES.length] ?? 0o644);
    if (i % 4 === 0) chownSync(p, OWNER, OWNER + (i % 8 === 0 ? 1 : 0));
    utimesSync(p, timeFor(opts.seed + 100 + i), timeFor(opts.seed + 100 + i));
  }
  symlinkSync('big/blob-0.bin', join(root, 'latest'));
  lchownSync(join(root, 'latest'), OWNER, OWNER);
  mkdir('owned', 0o700);
  chownSync(join(root, 'owned'), OWNER, OWNER);
  writeFileSync(join(root, 'owned', 'secret-ish.txt'), 'only uid 1234 reads this\n', { mode: 0o400 });
  chownSync(join(root, 'owned', 'secret-ish.txt'), OWNER, OWNER);
  utimesSync(join(root, 'owned', 'secret-ish.txt'), timeFor(opts.seed + 50), timeFor(opts.seed + 50));
  // Directory times last, deepest first: writing into a directory changes its mtime.
  for (const rel of [...new Set(dirs)].sort((a, b) => b.split('/').length - a.split('/').length)) utimesSync(join(root, rel), timeFor(opts.seed + 10), timeFor(opts.seed + 10));
}
