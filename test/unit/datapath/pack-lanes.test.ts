/**
 * Large files' chunks are packed apart from the small files' bundles written meanwhile: a restore then finds a file's
 * chunks side by side and reads a pack's worth of them in one request.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backup, WORKER_CHUNK_MIN } from '../../../src/datapath/uploader.js';
import { restore } from '../../../src/datapath/restorer.js';
import { isBundleSlice, isZeroRun } from '../../../src/datapath/tree.js';
import { cleanupTempDirs, describeTree, fileEntries, newRepo, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

describe('pack lanes', () => {
  it("keeps a large file's chunks in packs of their own, away from the bundles of small files", async () => {
    const src = tempDir('lanes-src');
    mkdirSync(join(src, 'd'));
    // Small files before and after the large ones in walk order, so bundles close while the large files are chunked.
    for (let i = 0; i < 300; i++) writeFileSync(join(src, 'd', `a${String(i).padStart(3, '0')}.txt`), `line ${i}\n`.repeat(200 + i));
    writeFileSync(join(src, 'd', 'big1.bin'), randomBytes(WORKER_CHUNK_MIN + (1 << 20)));
    writeFileSync(join(src, 'd', 'big2.bin'), randomBytes(WORKER_CHUNK_MIN + (2 << 20)));
    for (let i = 0; i < 300; i++) writeFileSync(join(src, 'd', `z${String(i).padStart(3, '0')}.txt`), `row ${i}\n`.repeat(300 + i));
    const repo = await newRepo(undefined, { packSize: 2 << 20, chunkSizes: { min: 128 * 1024, avg: 256 * 1024, max: 1024 * 1024 } });
    const result = await backup({ source: src, repository: repo, workers: 2 });

    const entries = await fileEntries(repo, result.snapshotId);
    const packsOf = (names: string[]): Set<number> => {
      const packs = new Set<number>();
      for (const name of names) {
        for (const item of entries.get(name)?.c ?? []) {
          if (isZeroRun(item)) continue;
          const loc = repo.index.get(isBundleSlice(item) ? item.b : item);
          if (loc) packs.add(loc.pack);
        }
      }
      return packs;
    };
    const largePacks = packsOf(['d/big1.bin', 'd/big2.bin']);
    const smallPacks = packsOf([...entries.keys()].filter((name) => name.endsWith('.txt')));
    expect(largePacks.size).toBeGreaterThan(1);
    expect(smallPacks.size).toBeGreaterThan(0);
    expect([...largePacks].filter((p) => smallPacks.has(p))).toEqual([]);

    const out = tempDir('lanes-out');
    await restore({ repository: repo, snapshotId: result.snapshotId, target: out });
    expect(describeTree(out)).toEqual(describeTree(src));
  });
});
