import { describe, expect, it } from 'vitest';
import type { ContentInfo } from '../../../../src/datapath/kopia/index.js';
import { planPackReads } from '../../../../src/datapath/kopia/read-plan.js';

const info = (id: string, packBlobId: string, packOffset: number, packedLength: number): { info: ContentInfo } => ({
  info: { id, packBlobId, packOffset, packedLength, originalLength: packedLength - 28, timestampSeconds: 0, deleted: false, compressionHeaderId: 0, formatVersion: 2, encryptionKeyId: 0 },
});

const shape = (reads: ReturnType<typeof planPackReads<{ info: ContentInfo }>>) => reads.map((r) => [r.packBlobId, r.offset, r.length, r.items.map((i) => i.info.id)]);

describe('planning pack reads for small files', () => {
  it('reads neighbours in one pack together, in pack order, whatever order the directory lists them in', () => {
    const reads = planPackReads([info('c', 'p1', 200, 50), info('a', 'p1', 0, 100), info('b', 'p1', 100, 100)]);
    expect(shape(reads)).toEqual([['p1', 0, 250, ['a', 'b', 'c']]]);
  });

  it('bridges a small gap, and starts a new read past a large one', () => {
    const reads = planPackReads([info('a', 'p1', 0, 100), info('b', 'p1', 100 + 10, 100), info('c', 'p1', 1_000_000, 100)], 64 * 1024);
    expect(shape(reads)).toEqual([
      ['p1', 0, 210, ['a', 'b']],
      ['p1', 1_000_000, 100, ['c']],
    ]);
  });

  it('never reads across packs', () => {
    const reads = planPackReads([info('a', 'p1', 0, 100), info('b', 'p2', 100, 100)]);
    expect(shape(reads)).toEqual([
      ['p1', 0, 100, ['a']],
      ['p2', 100, 100, ['b']],
    ]);
  });

  it('caps the bytes of one read', () => {
    const reads = planPackReads([info('a', 'p1', 0, 600), info('b', 'p1', 600, 600), info('c', 'p1', 1200, 600)], 64, 1000);
    expect(shape(reads)).toEqual([
      ['p1', 0, 600, ['a']],
      ['p1', 600, 600, ['b']],
      ['p1', 1200, 600, ['c']],
    ]);
  });

  it('one content under two names: both files come from the same bytes', () => {
    const reads = planPackReads([info('a', 'p1', 0, 100), info('a', 'p1', 0, 100)]);
    expect(shape(reads)).toEqual([['p1', 0, 100, ['a', 'a']]]);
  });
});
