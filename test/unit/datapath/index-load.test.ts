import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { Repository } from '../../../src/datapath/repository.js';
import { backup } from '../../../src/datapath/uploader.js';
import { maintenance } from '../../../src/datapath/maintenance.js';
import type { ObjectStore } from '../../../src/plugins/object-store/types.js';
import { cleanupTempDirs, FAST_KDF, PASSWORD, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

describe('in-memory index', () => {
  it('loads the same entries with or without index files read ahead, and a second load adds only new files', async () => {
    const root = tempDir('repo');
    const store = new FilesystemObjectStore({ root, durability: 'none' });
    // Without bundles: every file is a blob of its own, so the index has an entry per file.
    const repo = await Repository.init({ store, password: PASSWORD, kdf: FAST_KDF, features: [] });
    const src = tempDir('src');
    for (let i = 0; i < 50; i++) writeFileSync(join(src, `f${i}`), `file number ${i}\n`.repeat(40 + i));
    await backup({ source: src, repository: repo });

    const plain = await Repository.open({ store, password: PASSWORD });
    await plain.loadIndex();
    const ahead = await Repository.open({ store, password: PASSWORD, prefetchIndex: true });
    const names = await ahead.loadIndex();
    expect(names.length).toBeGreaterThan(0);
    expect(ahead.index.size).toBe(plain.index.size);
    expect(ahead.index.size).toBeGreaterThan(50);
    for (const [hex, loc] of plain.index.entries()) expect(ahead.index.get(hex)).toEqual(loc);

    for (let i = 0; i < 10; i++) writeFileSync(join(src, `g${i}`), `another file ${i}\n`.repeat(30 + i));
    await backup({ source: src, repository: await Repository.open({ store, password: PASSWORD }) });
    const before = ahead.index.size;
    await ahead.loadIndex();
    expect(ahead.index.size).toBe(before + 10 + 1); // ten files, one new root listing
  });

  it('reads an index that maintenance consolidates between the listing and the reads (a reader without a lock)', async () => {
    const root = tempDir('repo');
    const store = new FilesystemObjectStore({ root, durability: 'none' });
    await Repository.init({ store, password: PASSWORD, kdf: FAST_KDF, features: [] });
    const src = tempDir('src');
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5; i++) writeFileSync(join(src, `r${round}-${i}`), `round ${round} file ${i}\n`.repeat(50));
      await backup({ source: src, repository: await Repository.open({ store, password: PASSWORD }) });
    }
    const expected = await Repository.open({ store, password: PASSWORD });
    await expected.loadIndex();

    // The first index read runs a whole maintenance first: every listed index file is replaced by one new file.
    let maintained = false;
    const racing: ObjectStore = Object.assign(Object.create(store) as ObjectStore, {
      async get(key: string, options?: Parameters<ObjectStore['get']>[1]) {
        if (key.startsWith('index/') && !maintained) {
          maintained = true;
          await maintenance({ repository: await Repository.open({ store, password: PASSWORD }) });
        }
        return store.get(key, options);
      },
    });
    const reader = await Repository.open({ store: racing, password: PASSWORD });
    const names = await reader.loadIndex();
    expect(maintained).toBe(true);
    expect(names).toHaveLength(1);
    expect(reader.index.size).toBe(expected.index.size);
    for (const [hex, loc] of reader.index.entries()) expect(expected.index.get(hex)?.length).toBe(loc.length);
  });
});
