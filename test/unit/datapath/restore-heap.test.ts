// A restore holds the data path's V8 heap settings (heap-tuning.ts) while it runs, looks at the young generation as
// it walks, and gives the settings back when it ends, also when it fails: they are process-wide, and a server or a
// node agent runs many restores in one process.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { backup } from '../../../src/datapath/uploader.js';
import { restore } from '../../../src/datapath/restorer.js';
import { cleanupTempDirs, newRepo, tempDir } from './helpers.js';

const heap = vi.hoisted(() => ({ taken: 0, released: 0, checks: 0, checksWhileHeld: 0 }));

vi.mock('../../../src/datapath/heap-tuning.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/datapath/heap-tuning.js')>();
  return {
    ...real,
    tuneHeapForDataPath: () => {
      heap.taken++;
      const tuning = real.tuneHeapForDataPath();
      let held = true;
      return {
        check: () => {
          heap.checks++;
          if (held) heap.checksWhileHeld++;
          tuning.check();
        },
        release: () => {
          if (held) heap.released++;
          held = false;
          tuning.release();
        },
      };
    },
  };
});

afterAll(cleanupTempDirs);

beforeEach(() => {
  heap.taken = heap.released = heap.checks = heap.checksWhileHeld = 0;
});

describe('heap settings during a restore', () => {
  it('are taken for the restore, looked at as it walks, and given back when it ends', async () => {
    const repo = await newRepo();
    const src = tempDir('heap-src');
    for (let d = 0; d < 3; d++) {
      mkdirSync(join(src, `d${d}`));
      for (let f = 0; f < 700; f++) writeFileSync(join(src, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
    }
    const { snapshotId } = await backup({ source: src, repository: repo });
    heap.taken = heap.released = heap.checks = heap.checksWhileHeld = 0;

    const r = await restore({ repository: repo, snapshotId, target: tempDir('heap-dst') });
    expect(r.errors).toEqual([]);
    expect(r.stats.files).toBe(2100);
    expect(heap.taken).toBe(1);
    expect(heap.released).toBe(1);
    // One look every 1,024 entries walked: 2,103 entries.
    expect(heap.checksWhileHeld).toBe(2);
  });

  it('are given back when the restore fails', async () => {
    const repo = await newRepo();
    const src = tempDir('heap-src2');
    writeFileSync(join(src, 'a.txt'), 'a\n');
    await backup({ source: src, repository: repo });
    heap.taken = heap.released = 0;

    await expect(restore({ repository: repo, snapshotId: 'ffffffff', target: tempDir('heap-dst2') })).rejects.toThrow();
    expect(heap.taken).toBe(1);
    expect(heap.released).toBe(1);
  });
});
