import { describe, expect, it } from 'vitest';
import { PieceReads, pickRead } from '../../../src/datapath/piece-reads.js';
import type { PackSpan } from '../../../src/datapath/read-plan.js';
import type { BlobId, PackId } from '../../../src/datapath/ids.js';
import { ByteBudget } from '../../../src/datapath/restore-reads.js';

interface Piece {
  hex: BlobId;
  span: PackSpan<PackId>;
}
const piece = (hex: string, pack: string, offset: number, length: number): Piece => ({ hex: hex as BlobId, span: { pack: pack as PackId, offset, length } });

describe('picking the next read of large files', () => {
  it('plans over every waiting piece, and starts with the read that holds the oldest', () => {
    const waiting = [
      { seq: 3, piece: piece('c', 'p2', 0, 10) },
      { seq: 1, piece: piece('a2', 'p1', 10, 10) },
      { seq: 2, piece: piece('b', 'p1', 20, 10) },
      { seq: 0, piece: piece('a1', 'p3', 0, 10) },
    ];
    const first = pickRead(waiting);
    expect(first.pack).toBe('p3');
    // Pieces of two files side by side in a pack: one read.
    const rest = pickRead(waiting.filter((w) => w.seq !== 0));
    expect([rest.pack, rest.offset, rest.length, rest.items.map((w) => w.piece.hex)]).toEqual(['p1', 10, 20, ['a2', 'b']]);
  });
});

describe('the shared reads of large files', () => {
  const setup = (failPack?: string) => {
    const reads: PackSpan[] = [];
    const pack = Buffer.from('abcdefghijklmnopqrstuvwxyz');
    const r = new PieceReads<Piece>({
      budget: new ByteBudget(1 << 20),
      maxReads: 2,
      read: async (span) => {
        reads.push(span);
        await new Promise((res) => setImmediate(res));
        if (span.pack === failPack) throw new Error(`pack ${span.pack} is missing`);
        return pack.subarray(span.offset, span.offset + span.length);
      },
    });
    return { r, reads };
  };

  it('reads neighbouring pieces of two files in one request and hands each its bytes', async () => {
    const { r, reads } = setup();
    const got = new Map<string, string>();
    const req = (p: Piece) => ({ piece: p, write: async (read: PackSpan, data: Buffer) => void got.set(p.hex, data.subarray(p.span.offset - read.offset, p.span.offset - read.offset + p.span.length).toString()) });
    await Promise.all([r.submit({}, [req(piece('a', 'p', 0, 3)), req(piece('a2', 'p', 6, 2))]), r.submit({}, [req(piece('b', 'p', 3, 3))])]);
    expect(Object.fromEntries(got)).toEqual({ a: 'abc', b: 'def', a2: 'gh' });
    expect(reads.length).toBeLessThanOrEqual(2);
  });

  it('fails a file once all its pieces have settled, and leaves the other files alone', async () => {
    const { r } = setup('bad');
    let writes = 0;
    const req = (p: Piece) => ({ piece: p, write: async () => void writes++ });
    const failing = r.submit({}, [req(piece('x', 'bad', 0, 2)), req(piece('y', 'p', 10, 2)), req(piece('z', 'p', 20, 2))]);
    const fine = r.submit({}, [req(piece('w', 'p', 0, 2))]);
    await expect(failing).rejects.toThrow('pack bad is missing');
    await fine;
    expect(writes).toBeGreaterThanOrEqual(1);
  });

  it('passes on a write failure as the file\'s error', async () => {
    const { r } = setup();
    const err = Object.assign(new Error('no space left'), { code: 'ENOSPC' });
    await expect(r.submit({}, [{ piece: piece('a', 'p', 0, 2), write: () => Promise.reject(err) }])).rejects.toBe(err);
  });
});
