/** Shared helpers for data-path tests: temp dirs, a fast-KDF repository, tree comparison. */
import { mkdirSync, mkdtempSync, rmSync, lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FilesystemObjectStore, type ObjectStore } from '../../../src/plugins/object-store/index.js';
import { ForwardingObjectStore } from '../../../src/plugins/object-store/forwarding.js';
import type { GetOptions } from '../../../src/plugins/object-store/types.js';
import { Repository, type InitOptions } from '../../../src/datapath/repository.js';
import { readTree, type TreeEntry } from '../../../src/datapath/tree.js';
import type { BlobId } from '../../../src/datapath/ids.js';

export const FAST_KDF = { N: 1024, r: 8, p: 1 };
export const PASSWORD = 'correct horse battery staple';

const dirs: string[] = [];
export function tempDir(tag: string): string {
  const d = mkdtempSync(join(tmpdir(), `cairn-${tag}-`));
  dirs.push(d);
  return d;
}
export function cleanupTempDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A store that counts the reads of each object. */
export class CountingStore extends ForwardingObjectStore {
  readonly reads = new Map<string, number>();
  constructor(inner: ObjectStore) {
    super(inner);
  }
  override get(key: string, options?: GetOptions): Promise<Buffer> {
    this.reads.set(key, (this.reads.get(key) ?? 0) + 1);
    return super.get(key, options);
  }
}

export async function newRepo(store?: ObjectStore, options: Pick<InitOptions, 'packSize' | 'chunkSizes' | 'compression' | 'features'> = {}): Promise<Repository> {
  return Repository.init({ store: store ?? new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' }), password: PASSWORD, kdf: FAST_KDF, ...options });
}

/**
 * Fills `root` with `dirs` × `perDir` small directories, d<i>/e<j>, each holding a 40-line leaf/file.txt and a tiny
 * file `tiny` ("<i><j>"): many listings and little data.
 */
export function writeNestedDirs(root: string, dirs: number, perDir: number): void {
  for (let d = 0; d < dirs; d++) {
    for (let e = 0; e < perDir; e++) {
      mkdirSync(join(root, `d${d}/e${e}/leaf`), { recursive: true });
      writeFileSync(join(root, `d${d}/e${e}/leaf/file.txt`), `d${d} e${e}\n`.repeat(40));
      writeFileSync(join(root, `d${d}/e${e}/tiny`), `${d}${e}`);
    }
  }
}

/**
 * Reshapes a writeNestedDirs tree as an incremental backup must follow: d3 removed, the directory d7/e1 replaced by
 * a file, a new directory (with a file two levels down) in `newIn`, and the leaf file of `changedIn` rewritten.
 */
export function reshapeNestedDirs(root: string, where: { newIn: string; changedIn: string }): void {
  rmSync(join(root, 'd3'), { recursive: true });
  rmSync(join(root, 'd7/e1'), { recursive: true });
  writeFileSync(join(root, 'd7/e1'), 'now a file');
  mkdirSync(join(root, where.newIn, 'new/inner'), { recursive: true });
  writeFileSync(join(root, where.newIn, 'new/inner/n.txt'), 'new');
  writeFileSync(join(root, where.changedIn, 'leaf/file.txt'), 'changed deep down\n');
}

export interface TreeFacts {
  [rel: string]: { type: string; mode: number; size?: number; content?: string; target?: string; mtimeMs?: number; ino?: number };
}

/** A comparable description of a directory tree (content hashed as hex for brevity). */
export function describeTree(root: string, rel = '', out: TreeFacts = {}): TreeFacts {
  for (const name of readdirSync(join(root, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    const p = join(root, r);
    const st = lstatSync(p);
    if (st.isDirectory()) {
      out[r] = { type: 'dir', mode: st.mode & 0o7777, mtimeMs: Math.floor(st.mtimeMs) };
      describeTree(root, r, out);
    } else if (st.isSymbolicLink()) {
      out[r] = { type: 'symlink', mode: 0, target: readlinkSync(p) };
    } else if (st.isFile()) {
      out[r] = { type: 'file', mode: st.mode & 0o7777, size: st.size, content: readFileSync(p).toString('base64').slice(0, 64) + readFileSync(p).length, mtimeMs: Math.floor(st.mtimeMs) };
    } else {
      out[r] = { type: 'other', mode: st.mode & 0o7777 };
    }
  }
  return out;
}

/** Every file entry of a snapshot, by path. */
export async function fileEntries(repo: Repository, snapshotId: string): Promise<Map<string, TreeEntry>> {
  await repo.loadIndex();
  const snap = await repo.snapshots.find(snapshotId);
  const out = new Map<string, TreeEntry>();
  const walk = async (ids: BlobId[], prefix: string): Promise<void> => {
    for await (const e of readTree(ids, (id) => repo.loadTreeBlob(id))) {
      if (e.t === 'd') await walk(e.sub ?? [], `${prefix}${e.n}/`);
      else out.set(`${prefix}${e.n}`, e);
    }
  };
  await walk(snap.tree, '');
  return out;
}
