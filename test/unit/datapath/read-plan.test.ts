import { describe, expect, it } from 'vitest';
import { planPackReads, type PackSpan } from '../../../src/datapath/read-plan.js';

interface Item {
  id: string;
  span: PackSpan;
}
const info = (id: string, pack: string, offset: number, length: number): Item => ({ id, span: { pack, offset, length } });
const plan = (items: Item[], maxGap?: number, maxSpan?: number) => planPackReads(items, (i) => i.span, { ...(maxGap !== undefined ? { maxGap } : {}), ...(maxSpan !== undefined ? { maxSpan } : {}) });
const shape = (reads: ReturnType<typeof plan>) => reads.map((r) => [r.pack, r.offset, r.length, r.items.map((i) => i.id)]);

describe('planning pack reads', () => {
  it('reads neighbours in one pack together, in pack order, whatever order the directory lists them in', () => {
    const reads = plan([info('c', 'p1', 200, 50), info('a', 'p1', 0, 100), info('b', 'p1', 100, 100)]);
    expect(shape(reads)).toEqual([['p1', 0, 250, ['a', 'b', 'c']]]);
  });

  it('bridges a small gap, and starts a new read past a large one', () => {
    const reads = plan([info('a', 'p1', 0, 100), info('b', 'p1', 100 + 10, 100), info('c', 'p1', 1_000_000, 100)], 64 * 1024);
    expect(shape(reads)).toEqual([
      ['p1', 0, 210, ['a', 'b']],
      ['p1', 1_000_000, 100, ['c']],
    ]);
  });

  it('never reads across packs', () => {
    const reads = plan([info('a', 'p1', 0, 100), info('b', 'p2', 100, 100)]);
    expect(shape(reads)).toEqual([
      ['p1', 0, 100, ['a']],
      ['p2', 100, 100, ['b']],
    ]);
  });

  it('caps the bytes of one read', () => {
    const reads = plan([info('a', 'p1', 0, 600), info('b', 'p1', 600, 600), info('c', 'p1', 1200, 600)], 64, 1000);
    expect(shape(reads)).toEqual([
      ['p1', 0, 600, ['a']],
      ['p1', 600, 600, ['b']],
      ['p1', 1200, 600, ['c']],
    ]);
  });

  it('one content under two names: both files come from the same bytes', () => {
    const reads = plan([info('a', 'p1', 0, 100), info('a', 'p1', 0, 100)]);
    expect(shape(reads)).toEqual([['p1', 0, 100, ['a', 'a']]]);
  });

  it('reads an item larger than a span alone, and goes on after it', () => {
    const reads = plan([info('a', 'p1', 0, 100), info('big', 'p1', 100, 5000), info('c', 'p1', 5100, 100)], 64, 1000);
    expect(shape(reads)).toEqual([
      ['p1', 0, 100, ['a']],
      ['p1', 100, 5000, ['big']],
      ['p1', 5100, 100, ['c']],
    ]);
  });

  it('orders reads by pack, then offset, whatever order the items come in', () => {
    const reads = plan([info('z', 'p2', 0, 10), info('b', 'p1', 500_000, 10), info('a', 'p1', 0, 10)]);
    expect(shape(reads)).toEqual([
      ['p1', 0, 10, ['a']],
      ['p1', 500_000, 10, ['b']],
      ['p2', 0, 10, ['z']],
    ]);
  });
});
