// A restore holds the data path's V8 heap settings (heap-tuning.ts) while it runs and gives them back when it ends,
// also when it fails: they are process-wide, and a server or a node agent runs many restores in one process.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { heapTuningHolders } from '../../../src/datapath/heap-tuning.js';
import { backup } from '../../../src/datapath/uploader.js';
import { restore } from '../../../src/datapath/restorer.js';
import { cleanupTempDirs, newRepo, tempDir, writeNestedDirs } from './helpers.js';

afterAll(cleanupTempDirs);

describe('heap settings during a restore', () => {
  it('are held while the restore runs and given back when it ends', async () => {
    const repo = await newRepo();
    const src = tempDir('heap-src');
    writeNestedDirs(src, 3, 350);
    const { snapshotId } = await backup({ source: src, repository: repo });
    const before = heapTuningHolders();
    const seen: number[] = [];

    const r = await restore({ repository: repo, snapshotId, target: tempDir('heap-dst'), onProgress: () => seen.push(heapTuningHolders()) });
    expect(r.errors).toEqual([]);
    expect(r.stats.files).toBe(2100);
    // The last progress report is forced at the end of the walk, before the restore lets go.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((n) => n === before + 1)).toBe(true);
    expect(heapTuningHolders()).toBe(before);
  });

  it('are given back when the restore fails', async () => {
    const repo = await newRepo();
    const src = tempDir('heap-src2');
    writeFileSync(join(src, 'a.txt'), 'a\n');
    await backup({ source: src, repository: repo });
    const before = heapTuningHolders();

    await expect(restore({ repository: repo, snapshotId: 'ffffffff', target: tempDir('heap-dst2') })).rejects.toThrow();
    expect(heapTuningHolders()).toBe(before);
  });
});
