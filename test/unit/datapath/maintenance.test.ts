import { randomBytes } from 'node:crypto';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { Repository } from '../../../src/datapath/repository.js';
import { backup } from '../../../src/datapath/uploader.js';
import { restore } from '../../../src/datapath/restorer.js';
import { check } from '../../../src/datapath/check.js';
import { maintenance } from '../../../src/datapath/maintenance.js';
import { RepositoryLockedError } from '../../../src/datapath/errors.js';
import { cleanupTempDirs, describeTree, FAST_KDF, PASSWORD, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

const SMALL = { packSize: 1 << 20, chunkSizes: { min: 64 * 1024, avg: 128 * 1024, max: 512 * 1024 } };

async function setup() {
  const store = new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' });
  const repo = await Repository.init({ store, password: PASSWORD, kdf: FAST_KDF, ...SMALL });
  const open = () => Repository.open({ store, password: PASSWORD });
  return { store, repo, open };
}

async function countPacks(store: FilesystemObjectStore): Promise<number> {
  let n = 0;
  for await (const _ of store.list('data/')) n++;
  return n;
}

describe('maintenance', () => {
  it('removes content of forgotten snapshots, repacks, and keeps the rest restorable', async () => {
    const { store, open } = await setup();
    const src = tempDir('src');
    for (let i = 0; i < 6; i++) writeFileSync(join(src, `keep${i}`), randomBytes(300 * 1024));
    for (let i = 0; i < 6; i++) writeFileSync(join(src, `drop${i}`), randomBytes(300 * 1024));
    const first = await backup({ source: src, repository: await open() });
    for (let i = 0; i < 6; i++) rmSync(join(src, `drop${i}`));
    const second = await backup({ source: src, repository: await open() });
    await store.delete(`snapshots/${first.snapshotId}`); // "forget" the first snapshot
    const packsBefore = await countPacks(store);

    const result = await maintenance({ repository: await open(), gracePeriodMs: 0 });
    expect(result.snapshots).toBe(1);
    expect(result.blobsRemoved).toBeGreaterThan(0);
    expect(result.bytesFreed).toBeGreaterThan(1_000_000);
    expect(result.indexFilesAfter).toBeLessThanOrEqual(2);
    expect(await countPacks(store)).toBeLessThan(packsBefore);

    const c = await check({ repository: await open(), readData: true });
    expect(c.errors).toEqual([]);
    const dst = tempDir('dst');
    const r = await restore({ repository: await open(), snapshotId: second.snapshotId, target: dst });
    expect(r.errors).toEqual([]);
    expect(describeTree(dst)).toEqual(describeTree(src));
  });

  it('never touches packs younger than the grace period', async () => {
    const { store, open } = await setup();
    const src = tempDir('src');
    writeFileSync(join(src, 'a'), randomBytes(500 * 1024));
    const first = await backup({ source: src, repository: await open() });
    await store.delete(`snapshots/${first.snapshotId}`);
    const packsBefore = await countPacks(store);
    const result = await maintenance({ repository: await open() });
    expect(result.packsDeleted).toBe(0);
    expect(await countPacks(store)).toBe(packsBefore);
  });

  it('refuses to run while a backup holds a lock, and a backup refuses while maintenance runs', async () => {
    const { open } = await setup();
    const repo = await open();
    const held = await repo.locks.lock({ exclusive: false });
    await expect(maintenance({ repository: await open(), gracePeriodMs: 0 })).rejects.toBeInstanceOf(RepositoryLockedError);
    await held.release();
    const exclusive = await repo.locks.lock({ exclusive: true });
    const src = tempDir('src');
    writeFileSync(join(src, 'a'), 'x');
    await expect(backup({ source: src, repository: await open() })).rejects.toThrow(/locked/);
    await exclusive.release();
    await backup({ source: src, repository: await open() });
  });

  it('lets two backups write to one repository at the same time', async () => {
    const { open } = await setup();
    const a = tempDir('src');
    const b = tempDir('src');
    const shared = randomBytes(700 * 1024);
    writeFileSync(join(a, 'shared'), shared);
    writeFileSync(join(b, 'shared'), shared);
    writeFileSync(join(a, 'own'), randomBytes(400 * 1024));
    writeFileSync(join(b, 'own'), randomBytes(400 * 1024));
    const [ra, rb] = await Promise.all([backup({ source: a, repository: await open() }), backup({ source: b, repository: await open() })]);
    const c = await check({ repository: await open(), readData: true });
    expect(c.errors).toEqual([]);
    for (const [snap, src] of [[ra.snapshotId, a], [rb.snapshotId, b]] as const) {
      const dst = tempDir('dst');
      await restore({ repository: await open(), snapshotId: snap, target: dst });
      expect(describeTree(dst)).toEqual(describeTree(src));
    }
    // Duplicate copies written by the racing writers are cleaned up without losing anything.
    await maintenance({ repository: await open(), gracePeriodMs: 0 });
    expect((await check({ repository: await open(), readData: true })).errors).toEqual([]);
  });
});
