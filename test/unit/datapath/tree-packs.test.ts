/**
 * Listings read a whole tree pack at a time (tree-packs.ts): a walk of every listing of a snapshot makes about one
 * read per tree pack, not one per directory, and reads the same entries as before.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Repository } from '../../../src/datapath/repository.js';
import { backup } from '../../../src/datapath/uploader.js';
import { BlobType, packKey } from '../../../src/datapath/pack.js';
import type { PackId } from '../../../src/datapath/ids.js';
import { FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { cleanupTempDirs, CountingStore, fileEntries, newRepo, PASSWORD, tempDir, writeNestedDirs } from './helpers.js';

afterAll(cleanupTempDirs);

describe('tree packs read whole', () => {
  it('walks 2,000 listings with about one read per tree pack', async () => {
    const store = new CountingStore(new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' }));
    await newRepo(store);
    const src = tempDir('src');
    writeNestedDirs(src, 40, 16); // 40 + 640 + 640 directories, plus the root
    const { snapshotId } = await backup({ source: src, repository: await Repository.open({ store, password: PASSWORD }) });

    const repo = await Repository.open({ store, password: PASSWORD });
    await repo.loadIndex();
    const treePacks = new Set<PackId>();
    for (const [, loc] of repo.index.entries()) if (loc.type === BlobType.Tree) treePacks.add(repo.index.packOf(loc));
    store.reads.clear();
    const entries = await fileEntries(repo, snapshotId);
    expect(entries.size).toBe(40 * 16 * 2);
    const packReads = [...store.reads].filter(([key]) => key.startsWith('data/'));
    // Each tree pack once (a pack read again only after six others pushed it out, which this walk order never does).
    expect(packReads.map(([key]) => key).sort()).toEqual([...treePacks].map(packKey).sort());
    expect(packReads.every(([, n]) => n === 1)).toBe(true);
  });
});
