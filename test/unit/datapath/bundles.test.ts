/**
 * Small files stored several to a bundle blob (repository feature `bundles`): fewer blobs, listings that name slices,
 * restores (whole, sub-path, with and without the batch workers) that give every byte back, incremental backups that
 * keep the slices of unchanged files, maintenance that keeps bundles still named, and check that catches a slice past
 * a bundle's end.
 */
import { mkdirSync, readFileSync, writeFileSync, linkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { Repository } from '../../../src/datapath/repository.js';
import { backup } from '../../../src/datapath/uploader.js';
import { restore } from '../../../src/datapath/restorer.js';
import { check } from '../../../src/datapath/check.js';
import { maintenance } from '../../../src/datapath/maintenance.js';
import { type BundleSlice, type TreeEntry } from '../../../src/datapath/tree.js';
import { RepositoryCorruptError } from '../../../src/datapath/errors.js';
import { BlobWriter } from '../../../src/datapath/blob-writer.js';
import { BlobType } from '../../../src/datapath/pack.js';
import { blobIdOf } from '../../../src/datapath/ids.js';
import { sealFile } from '../../../src/datapath/crypto.js';
import { cleanupTempDirs, describeTree, FAST_KDF, fileEntries, PASSWORD, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

/** Text files of 300 B to 20 KiB in three directories, one nested, plus an inline, an empty, a large and a hard-linked file. */
function smallTree(): string {
  const src = tempDir('src');
  for (const dir of ['a', 'b', 'a/deep']) {
    mkdirSync(join(src, dir), { recursive: true });
    for (let i = 0; i < 40; i++) writeFileSync(join(src, dir, `f${String(i).padStart(2, '0')}.txt`), `${dir} line ${i}\n`.repeat(30 + i * 40));
  }
  writeFileSync(join(src, 'tiny'), 'inline\n');
  writeFileSync(join(src, 'empty'), '');
  writeFileSync(join(src, 'large.bin'), Buffer.alloc(200_000, 7));
  writeFileSync(join(src, 'b/linked'), 'two names\n'.repeat(100));
  linkSync(join(src, 'b/linked'), join(src, 'b/linked-too'));
  return src;
}

async function setup(features?: []) {
  const store = new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' });
  await Repository.init({ store, password: PASSWORD, kdf: FAST_KDF, ...(features ? { features } : {}) });
  const open = () => Repository.open({ store, password: PASSWORD });
  return { store, open };
}


const sliceOf = (e: TreeEntry | undefined): BundleSlice | undefined => {
  const item = e?.c?.[0];
  return item && typeof item === 'object' && 'b' in item ? item : undefined;
};

describe('small-file bundles', () => {
  it('stores small files several to a blob, and restores every byte, mode and time (batch workers and main thread alike)', async () => {
    const { open } = await setup();
    const src = smallTree();
    const repo = await open();
    const result = await backup({ source: src, repository: repo });
    expect(result.stats.files).toBe(125);

    const entries = await fileEntries(await open(), result.snapshotId);
    const bundled = [...entries.values()].filter((e) => sliceOf(e));
    // Every small file of the three directories, not the inline, empty, large or hard-linked ones.
    expect(bundled).toHaveLength(120);
    expect(sliceOf(entries.get('tiny'))).toBeUndefined();
    expect(entries.get('tiny')?.in).toBeDefined();
    expect(sliceOf(entries.get('large.bin'))).toBeUndefined();
    expect(sliceOf(entries.get('b/linked'))).toBeUndefined();
    // Slices of one bundle follow each other; a bundle holds at most 256 KiB.
    const bundles = new Set(bundled.map((e) => sliceOf(e)!.b));
    expect(bundles.size).toBeLessThan(20);
    const reread = await open();
    await reread.loadIndex();
    for (const b of bundles) expect(reread.index.get(b)!.rawLength).toBeLessThanOrEqual(256 * 1024 + 32 * 1024);
    for (const e of bundled) expect(sliceOf(e)!.l).toBe(e.s);

    for (const workers of [undefined, 0]) {
      const dst = tempDir('dst');
      const r = await restore({ repository: await open(), snapshotId: result.snapshotId, target: dst, ...(workers !== undefined ? { workers } : {}) });
      expect(r.errors).toEqual([]);
      expect(describeTree(dst)).toEqual(describeTree(src));
    }
  });

  it('restores a sub-path whose files share bundles with files left out', async () => {
    const { open } = await setup();
    const src = smallTree();
    const { snapshotId } = await backup({ source: src, repository: await open() });
    const dst = tempDir('dst');
    const r = await restore({ repository: await open(), snapshotId, target: dst, path: 'a/deep' });
    expect(r.errors).toEqual([]);
    expect(describeTree(dst)).toEqual(describeTree(join(src, 'a/deep')));
  });

  it('an incremental backup keeps the slices of unchanged files and bundles only the changed ones', async () => {
    const { open } = await setup();
    const src = smallTree();
    const first = await backup({ source: src, repository: await open() });
    writeFileSync(join(src, 'a/f03.txt'), 'changed\n'.repeat(500));
    writeFileSync(join(src, 'b/new.txt'), 'new file\n'.repeat(300));
    const second = await backup({ source: src, repository: await open() });
    expect(second.stats.newFiles).toBe(2);
    expect(second.stats.newBytes).toBeLessThan(10_000 + 8_000); // the two files and the listings that changed

    const before = await fileEntries(await open(), first.snapshotId);
    const after = await fileEntries(await open(), second.snapshotId);
    expect(sliceOf(after.get('a/f04.txt'))).toEqual(sliceOf(before.get('a/f04.txt')));
    const changed = sliceOf(after.get('a/f03.txt'));
    expect(changed?.b).not.toBe(sliceOf(before.get('a/f03.txt'))?.b);
    expect(sliceOf(after.get('b/new.txt'))).toBeDefined();

    const dst = tempDir('dst');
    expect((await restore({ repository: await open(), snapshotId: second.snapshotId, target: dst })).errors).toEqual([]);
    expect(describeTree(dst)).toEqual(describeTree(src));
  });

  it('maintenance keeps every bundle a remaining snapshot names, even when most of its files are gone', async () => {
    const { store, open } = await setup();
    const src = smallTree();
    const first = await backup({ source: src, repository: await open() });
    for (let i = 1; i < 40; i++) rmSync(join(src, 'b', `f${String(i).padStart(2, '0')}.txt`));
    const second = await backup({ source: src, repository: await open() });
    await store.delete(`snapshots/${first.snapshotId}`);
    await maintenance({ repository: await open(), gracePeriodMs: 0 });
    const c = await check({ repository: await open(), readData: true });
    expect(c.errors).toEqual([]);
    const dst = tempDir('dst');
    expect((await restore({ repository: await open(), snapshotId: second.snapshotId, target: dst })).errors).toEqual([]);
    expect(describeTree(dst)).toEqual(describeTree(src));
    expect(readFileSync(join(dst, 'b/f00.txt'), 'utf8')).toBe(readFileSync(join(src, 'b/f00.txt'), 'utf8'));
  });

  it('check reports a slice that runs past the end of its bundle', async () => {
    const { open } = await setup();
    const src = smallTree();
    const { snapshotId } = await backup({ source: src, repository: await open() });
    // A listing that names more bytes of a bundle than it holds: what a damaged or forged tree would say.
    const repo = await open();
    await repo.loadIndex();
    const entries = await fileEntries(repo, snapshotId);
    const slice = sliceOf(entries.get('a/f00.txt'))!;
    const forged = { ...entries.get('a/f00.txt')!, n: 'forged', c: [{ ...slice, l: repo.index.get(slice.b)!.rawLength + 1 }] };
    const data = Buffer.from(JSON.stringify(forged) + '\n');
    const id = repo.hasher.id(data);
    const w = new BlobWriter(repo, { workers: 0 });
    await w.add(BlobType.Tree, id, blobIdOf(id), data);
    await w.flush();
    const { id: _id, ...snap } = await repo.snapshots.find(snapshotId);
    await repo.snapshots.save({ ...snap, tree: [blobIdOf(id)], parent: snapshotId });
    const c = await check({ repository: await open() });
    expect(c.errors.some((e) => /names bytes past the end of bundle [0-9a-f]{16}/.test(e))).toBe(true);
  });

  it('a repository without the feature stores a blob per file; one with a feature this cairn does not know is refused', async () => {
    const { store, open } = await setup([]);
    const src = smallTree();
    const { snapshotId } = await backup({ source: src, repository: await open() });
    const entries = await fileEntries(await open(), snapshotId);
    expect([...entries.values()].filter((e) => sliceOf(e))).toEqual([]);

    const repo = await open();
    await store.put('config', sealFile(repo.keys, 'config', Buffer.from(JSON.stringify({ ...repo.config, features: ['bundles', 'from-the-future'] }))));
    const refused = Repository.open({ store, password: PASSWORD });
    await expect(refused).rejects.toThrow(RepositoryCorruptError);
    await expect(Repository.open({ store, password: PASSWORD })).rejects.toThrow('repository uses format features this cairn does not know: from-the-future (this cairn knows bundles); use a newer cairn');
  });
});
