/**
 * How check and maintenance read a repository: the snapshots' listings a whole tree pack at a time (one ranged read
 * per listing was a request per directory on S3), and with readData every blob opened on the worker threads, under
 * the data path's heap settings, with a blob that fails named with its pack.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { check } from '../../../src/datapath/check.js';
import { RepositoryCorruptError } from '../../../src/datapath/errors.js';
import { heapTuningHolders } from '../../../src/datapath/heap-tuning.js';
import type { BlobId, PackId } from '../../../src/datapath/ids.js';
import { maintenance } from '../../../src/datapath/maintenance.js';
import { BlobType, packKey } from '../../../src/datapath/pack.js';
import { Repository } from '../../../src/datapath/repository.js';
import { backup } from '../../../src/datapath/uploader.js';
import { FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { cleanupTempDirs, CountingStore, newRepo, PASSWORD, tempDir, writeNestedDirs } from './helpers.js';

afterAll(cleanupTempDirs);

/** A repository holding one backup of 40 x 16 small directories (1,321 listings), and its tree packs. */
async function nestedRepo(): Promise<{ store: CountingStore; treePacks: Set<PackId>; treeBlobs: number }> {
  const store = new CountingStore(new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' }));
  await newRepo(store);
  const src = tempDir('src');
  writeNestedDirs(src, 40, 16);
  await backup({ source: src, repository: await Repository.open({ store, password: PASSWORD }) });
  const repo = await Repository.open({ store, password: PASSWORD });
  await repo.loadIndex();
  const treePacks = new Set<PackId>();
  let treeBlobs = 0;
  for (const [, loc] of repo.index.entries()) {
    if (loc.type !== BlobType.Tree) continue;
    treePacks.add(repo.index.packOf(loc));
    treeBlobs++;
  }
  return { store, treePacks, treeBlobs };
}

const packReads = (store: CountingStore) => [...store.reads].filter(([key]) => key.startsWith('data/'));

describe('check and maintenance walk the listings a tree pack at a time', () => {
  it('check reads each pack for its header and each tree pack once more, not each listing', async () => {
    const { store, treePacks, treeBlobs } = await nestedRepo();
    expect(treeBlobs).toBeGreaterThan(1300);
    store.reads.clear();
    const c = await check({ repository: await Repository.open({ store, password: PASSWORD }) });
    expect(c.errors).toEqual([]);
    const reads = packReads(store);
    // Every pack's header; tree packs once more for their listings.
    for (const [key, n] of reads) expect(n, key).toBe([...treePacks].some((p) => packKey(p) === key) ? 2 : 1);
    expect(reads.length).toBe(c.packs);
  });

  it('maintenance reads each tree pack once to mark what the snapshots use, and no other pack', async () => {
    const { store, treePacks } = await nestedRepo();
    store.reads.clear();
    const r = await maintenance({ repository: await Repository.open({ store, password: PASSWORD }) });
    expect(r.snapshots).toBe(1);
    const reads = packReads(store);
    expect(reads.map(([key]) => key).sort()).toEqual([...treePacks].map(packKey).sort());
    expect(reads.every(([, n]) => n === 1)).toBe(true);
  });
});

describe('check with readData', () => {
  it('opens every blob under the heap settings and gives them back', async () => {
    const { store } = await nestedRepo();
    const before = heapTuningHolders();
    const holders: number[] = [];
    const c = await check({ repository: await Repository.open({ store, password: PASSWORD }), readData: true, onProgress: () => holders.push(heapTuningHolders()) });
    expect(c.errors).toEqual([]);
    expect(c.readBytes).toBeGreaterThan(0);
    expect(holders.length).toBe(c.packs);
    expect(holders.every((n) => n === before + 1)).toBe(true);
    expect(heapTuningHolders()).toBe(before);
  });

  it('a blob that does not authenticate or does not match its ID is named with its pack, on a worker as here', async () => {
    const store = new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' });
    await newRepo(store);
    const src = tempDir('src');
    // Large enough for a blob of its own (small files' bytes may travel inside their listing or a bundle).
    writeFileSync(join(src, 'big.bin'), randomBytes(300 * 1024));
    await backup({ source: src, repository: await Repository.open({ store, password: PASSWORD }) });
    const repo = await Repository.open({ store, password: PASSWORD });
    await repo.loadIndex();
    const [hex, loc] = [...repo.index.entries()].find(([, l]) => l.type === BlobType.Data)!;
    const pack = repo.index.packOf(loc);
    const sealed = await repo.store.get(packKey(pack), { range: { offset: loc.offset, length: loc.length } });
    const tampered = Buffer.from(sealed);
    const mid = tampered.length >> 1;
    tampered[mid] = tampered[mid]! ^ 0xff;
    const otherId = ('0'.repeat(64)) as BlobId;
    for (const workers of [0, 2]) {
      if (workers) repo.useWorkers(workers);
      try {
        await repo.verifySealedBlob(hex, loc.flags, loc.rawLength, sealed, pack);
        const bad = await repo.verifySealedBlob(hex, loc.flags, loc.rawLength, tampered, pack).catch((e: unknown) => e);
        expect(bad).toBeInstanceOf(RepositoryCorruptError);
        expect((bad as Error).message).toContain(`blob ${hex.slice(0, 16)} in pack ${pack.slice(0, 12)}`);
        const wrong = await repo.verifySealedBlob(otherId, loc.flags, loc.rawLength, sealed, pack).catch((e: unknown) => e);
        expect(wrong).toBeInstanceOf(RepositoryCorruptError);
        expect((wrong as Error).message).toMatch(/does not match its ID|corrupted/);
      } finally {
        await repo.closeWorkers();
      }
    }
  });
});
