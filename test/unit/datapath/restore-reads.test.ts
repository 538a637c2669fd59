import { describe, expect, it } from 'vitest';
import { RepositoryCorruptError } from '../../../src/datapath/errors.js';
import type { BlobLocation } from '../../../src/datapath/index-file.js';
import type { BlobId, PackId } from '../../../src/datapath/ids.js';
import type { ContentItem } from '../../../src/datapath/tree.js';
import { BlobType } from '../../../src/datapath/pack.js';
import { bufferSize, ByteBudget, cut, layoutPieces, ReadBuffers, startRead } from '../../../src/datapath/restore-reads.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('the byte budget of a restore', () => {
  it('lets requests through while they fit, then in order as bytes come back', async () => {
    const budget = new ByteBudget(10);
    const order: string[] = [];
    await budget.acquire(6);
    const b = budget.acquire(6).then(() => order.push('b'));
    // Would fit, but waits behind b: a large read is not starved by small ones.
    const c = budget.acquire(2).then(() => order.push('c'));
    await tick();
    expect(order).toEqual([]);
    budget.release(6);
    await Promise.all([b, c]);
    expect(order).toEqual(['b', 'c']);
    expect(budget.inUse).toBe(8);
  });

  it('lets a request larger than the whole budget through alone', async () => {
    const budget = new ByteBudget(10);
    expect(await budget.acquire(50)).toBe(10);
    let second = false;
    const p = budget.acquire(1).then(() => (second = true));
    await tick();
    expect(second).toBe(false);
    budget.release(10);
    await p;
    expect(budget.inUse).toBe(1);
  });
});

describe('a planned read', () => {
  it('holds its bytes against the budget until released, and gives them back at once when it fails', async () => {
    const budget = new ByteBudget(100);
    const ok = startRead({ budget, span: { pack: 'p', offset: 0, length: 40 }, read: async (s) => Buffer.alloc(s.length) });
    await ok.reserved;
    expect(budget.inUse).toBe(40);
    const held = await ok.data;
    expect(held.data.length).toBe(40);
    held.release();
    held.release();
    expect(budget.inUse).toBe(0);
    const bad = startRead({ budget, span: { pack: 'p', offset: 0, length: 30 }, read: () => Promise.reject(new Error('gone')) });
    await expect(bad.data).rejects.toThrow('gone');
    expect(budget.inUse).toBe(0);
  });

  it('waits to start while the budget is spent', async () => {
    const budget = new ByteBudget(50);
    const first = startRead({ budget, span: { pack: 'p', offset: 0, length: 50 }, read: async (s) => Buffer.alloc(s.length) });
    let started = false;
    const second = startRead({
      budget,
      span: { pack: 'p', offset: 50, length: 10 },
      read: async (s) => {
        started = true;
        return Buffer.alloc(s.length);
      },
    });
    await tick();
    expect(started).toBe(false);
    (await first.data).release();
    await second.reserved;
    expect(started).toBe(true);
  });

  it('cuts an item out of its read, and calls a read too short for it a truncated pack', () => {
    const data = Buffer.from('0123456789');
    expect(cut({ pack: 'p', offset: 100, length: 10 }, data, { pack: 'p', offset: 103, length: 4 }).toString()).toBe('3456');
    expect(() => cut({ pack: 'p', offset: 100, length: 10 }, data.subarray(0, 5), { pack: 'p', offset: 103, length: 4 })).toThrow(RepositoryCorruptError);
  });
});

describe('laying out a file', () => {
  const loc = (pack: number, offset: number, length: number, rawLength: number): BlobLocation => ({ pack, type: BlobType.Data, flags: 0, offset, length, rawLength });
  const index = {
    entries: new Map<string, BlobLocation>([
      ['aa', loc(0, 0, 120, 100)],
      ['bb', loc(1, 500, 60, 50)],
      ['cc', loc(0, 120, 40, 300)],
    ]),
    get(hex: string) {
      return this.entries.get(hex);
    },
    packOf(l: BlobLocation) {
      return ['pack0', 'pack1'][l.pack]! as PackId;
    },
  };

  it('places each blob after the previous ones, leaves zero runs as holes, and takes a bundle slice its length', () => {
    const { pieces, size } = layoutPieces(['aa', { z: 4096 }, 'bb', { b: 'cc' as BlobId, o: 10, l: 7 }, 'aa'] as ContentItem[], index);
    expect(pieces.map((p) => [p.hex, p.pos, p.span.pack, p.span.offset, p.span.length, p.slice])).toEqual([
      ['aa', 0, 'pack0', 0, 120, undefined],
      ['bb', 4196, 'pack1', 500, 60, undefined],
      ['cc', 4246, 'pack0', 120, 40, { o: 10, l: 7 }],
      ['aa', 4253, 'pack0', 0, 120, undefined],
    ]);
    expect(size).toBe(4353);
  });

  it('names a blob that is in no index', () => {
    expect(() => layoutPieces(['aa', 'dd00112233'] as BlobId[], index)).toThrow(/blob dd00112233 is not in any index/);
  });
});

describe('the buffers of planned reads', () => {
  it('round sizes up so that buffers fit other reads', () => {
    expect(bufferSize(1)).toBe(64 * 1024);
    expect(bufferSize(100_000)).toBe(128 * 1024);
    expect(bufferSize(1 << 20)).toBe(1 << 20);
    expect(bufferSize((3 << 20) + 1)).toBe(4 << 20);
  });

  it('are reused once a read is released, and not beyond what may be kept', async () => {
    const buffers = new ReadBuffers(3 << 20);
    const budget = new ByteBudget(64 << 20);
    const targets: (Buffer | undefined)[] = [];
    const read = async (s: { length: number }, target?: Buffer) => {
      targets.push(target);
      return target!.subarray(0, s.length);
    };
    const first = await startRead({ budget, buffers, span: { pack: 'p', offset: 0, length: 1_500_000 }, read }).data;
    first.release();
    expect(buffers.kept).toBe(2 << 20);
    const second = await startRead({ budget, buffers, span: { pack: 'p', offset: 0, length: 1_200_000 }, read }).data;
    expect(targets[1]!.buffer).toBe(targets[0]!.buffer);
    expect(buffers.kept).toBe(0);
    const third = await startRead({ budget, buffers, span: { pack: 'p', offset: 0, length: 1_900_000 }, read }).data;
    second.release();
    third.release();
    // Two buffers of 2 MiB came back; only one fits in 3 MiB.
    expect(buffers.kept).toBe(2 << 20);
  });

  it('serve a read from a larger kept buffer when none of its own size is kept', async () => {
    const buffers = new ReadBuffers(16 << 20);
    const budget = new ByteBudget(64 << 20);
    const targets: Buffer[] = [];
    const read = async (s: { length: number }, target?: Buffer) => {
      targets.push(target!);
      return target!.subarray(0, s.length);
    };
    const large = await startRead({ budget, buffers, span: { pack: 'p', offset: 0, length: 5 << 20 }, read }).data;
    const middle = await startRead({ budget, buffers, span: { pack: 'p', offset: 0, length: 3 << 20 }, read }).data;
    large.release();
    middle.release();
    expect(buffers.kept).toBe(8 << 20);
    // 100 KB: no 128 KiB buffer is kept; the smaller of the two larger ones serves it, and goes back whole.
    const small = await startRead({ budget, buffers, span: { pack: 'p', offset: 0, length: 100_000 }, read }).data;
    expect(targets[2]!.buffer).toBe(targets[1]!.buffer);
    expect(targets[2]!.length).toBe(3 << 20);
    expect(small.data.length).toBe(100_000);
    expect(buffers.kept).toBe(5 << 20);
    small.release();
    expect(buffers.kept).toBe(8 << 20);
  });

  it('hold the target until release also when the store returned other bytes, and take it back after a failure', async () => {
    const buffers = new ReadBuffers(8 << 20);
    const budget = new ByteBudget(64 << 20);
    const held = await startRead({ budget, buffers, span: { pack: 'p', offset: 0, length: 10 }, read: async () => Buffer.alloc(10) }).data;
    expect(buffers.kept).toBe(0);
    held.release();
    expect(buffers.kept).toBe(64 * 1024);
    const failed = startRead({ budget, buffers, span: { pack: 'p', offset: 0, length: 10 }, read: () => Promise.reject(new Error('gone')) }).data;
    await expect(failed).rejects.toThrow('gone');
    expect(buffers.kept).toBe(64 * 1024);
    expect(budget.inUse).toBe(0);
  });
});
