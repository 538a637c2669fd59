/**
 * A restore reads file data with planned ranged reads (read-plan.ts, restore-reads.ts): each part of a pack is fetched
 * once, and a directory of small files takes a few large reads, not one per file. Listings are read through windows
 * (repository.ts readPackRange): a reader going through a pack in order has the next part fetched before it gets there.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FilesystemObjectStore, type ObjectStore } from '../../../src/plugins/object-store/index.js';
import type { GetOptions } from '../../../src/plugins/object-store/types.js';
import { BlobType } from '../../../src/datapath/pack.js';
import { restore } from '../../../src/datapath/restorer.js';
import { backup } from '../../../src/datapath/uploader.js';
import { cleanupTempDirs, describeTree, newRepo, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

const WINDOW = 4 << 20;

/** Records every ranged read of a pack. */
function recordingStore(inner: ObjectStore): { store: ObjectStore; reads: { key: string; offset: number; length: number }[] } {
  const reads: { key: string; offset: number; length: number }[] = [];
  const store = Object.create(inner) as ObjectStore;
  store.get = (key: string, options?: GetOptions) => {
    if (key.startsWith('data/') && options?.range) reads.push({ key, ...options.range });
    return inner.get(key, options);
  };
  return { store, reads };
}

async function repoWithOneLargeFile() {
  const recording = recordingStore(new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' }));
  // Small chunks, so they are read through the windows (blobs over half a window are fetched on their own).
  const repo = await newRepo(recording.store, { packSize: 32 << 20, chunkSizes: { min: 16 << 10, avg: 64 << 10, max: 256 << 10 } });
  const src = tempDir('src');
  const data = randomBytes(24 << 20);
  writeFileSync(join(src, 'big.bin'), data);
  const result = await backup({ source: src, repository: repo, workers: 0 });
  recording.reads.length = 0;
  return { repo, data, snapshotId: result.snapshotId, reads: recording.reads };
}

describe('restore reads', () => {
  it('fetch each part of a pack once', async () => {
    const { repo, data, snapshotId, reads } = await repoWithOneLargeFile();
    const target = tempDir('dst');
    await restore({ repository: repo, snapshotId, target, workers: 1 });
    expect(readFileSync(join(target, 'big.bin')).equals(data)).toBe(true);
    const bytes = reads.reduce((sum, r) => sum + r.length, 0);
    // 24 MiB of random data, sealed: read once, give or take the tree blobs' pack.
    expect(bytes).toBeGreaterThanOrEqual(24 << 20);
    expect(bytes).toBeLessThan(1.05 * (24 << 20));
  });

  it('read directories of small files with a few ranged reads, each byte once', async () => {
    const recording = recordingStore(new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' }));
    const repo = await newRepo(recording.store);
    const src = tempDir('src');
    for (const dir of ['a', 'b']) {
      mkdirSync(join(src, dir));
      for (let i = 0; i < 300; i++) writeFileSync(join(src, dir, `f${i}`), randomBytes(1000 + i * 10));
    }
    const result = await backup({ source: src, repository: repo });
    recording.reads.length = 0;
    const target = tempDir('dst');
    const r = await restore({ repository: repo, snapshotId: result.snapshotId, target });
    expect(r.errors).toEqual([]);
    expect(describeTree(target)).toEqual(describeTree(src));
    const dataBlobs = [...repo.index.entries()].filter(([, loc]) => loc.type === BlobType.Data);
    const stored = dataBlobs.reduce((sum, [, loc]) => sum + loc.length, 0);
    const bytes = recording.reads.reduce((sum, x) => sum + x.length, 0);
    // 600 files (~2 MB) in a few bundles: a handful of reads, not hundreds; no byte read twice (gaps aside).
    expect(recording.reads.length).toBeLessThanOrEqual(8);
    expect(bytes).toBeLessThan(stored + 8 * 64 * 1024);
  });
});

describe('read windows', () => {
  it('fetch the next part of a pack once a reader is past the middle of a window', async () => {
    const { repo, reads } = await repoWithOneLargeFile();
    repo.useReadWindows(WINDOW);
    const blobs = [...repo.index.entries()].filter(([, loc]) => loc.type === BlobType.Data).sort(([, a], [, b]) => a.pack - b.pack || a.offset - b.offset);
    const firstPack = blobs[0]![1].pack;
    const inFirstPack = blobs.filter(([, loc]) => loc.pack === firstPack);
    // Read blobs in pack order up to the first one that ends past the middle of the first window.
    let at = 0;
    for (; at < inFirstPack.length; at++) {
      const [hex, loc] = inFirstPack[at]!;
      await repo.readSealed(hex);
      if (loc.offset + loc.length > inFirstPack[0]![1].offset + WINDOW / 2) break;
    }
    const windowEnd = reads[0]!.offset + reads[0]!.length;
    // The next window was asked for, starting on a blob boundary, before any blob in it was read.
    expect(reads.length).toBe(2);
    expect(reads[1]!.offset).toBe(windowEnd);
    expect(inFirstPack.some(([, loc]) => loc.offset === windowEnd)).toBe(true);
    expect(inFirstPack[at]![1].offset + inFirstPack[at]![1].length).toBeLessThanOrEqual(windowEnd);
  });
});
