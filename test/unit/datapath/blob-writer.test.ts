/**
 * The blob writer's batches for the seal workers: blobs of every size, in any order, stored and read back whole.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { BlobWriter } from '../../../src/datapath/blob-writer.js';
import { BlobType } from '../../../src/datapath/pack.js';
import { blobIdOf } from '../../../src/datapath/ids.js';
import { cleanupTempDirs, newRepo } from './helpers.js';

afterAll(cleanupTempDirs);

describe('blob writer batches', () => {
  it('stores an empty blob followed by one larger than a batch slab (3 MiB with the default chunk sizes)', async () => {
    const repo = await newRepo();
    const slab = Math.min(repo.config.chunker.max, 2 * repo.config.chunker.avg) + (1 << 20);
    const sizes = [0, slab + 1, 10, slab - 5, 0, 7, slab + 1000, 1];
    const blobs = sizes.map((n) => randomBytes(n));
    const writer = new BlobWriter(repo, { workers: 1 });
    for (const data of blobs) {
      const id = repo.hasher.id(data);
      await writer.add(BlobType.Data, id, blobIdOf(id), data);
    }
    await writer.flush();
    for (const data of blobs) expect((await repo.loadBlob(blobIdOf(repo.hasher.id(data)))).equals(data)).toBe(true);
  });
});
