import { randomBytes } from 'node:crypto';
import { constants as zc, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sampledEntropy, worthCompressing, ZstdContext } from '../../../src/datapath/compress.js';

const text = (n: number, seed = 0): Buffer => {
  const words = ['const', 'value', 'return', 'function', 'index', 'buffer', 'length', 'if', 'else', '{', '}', ';', '\n'];
  const parts: string[] = [];
  let x = seed + 1;
  let size = 0;
  while (size < n) {
    x = (x * 1103515245 + 12345) >>> 0;
    const w = words[x % words.length]!;
    parts.push(w, ' ');
    size += w.length + 1;
  }
  return Buffer.from(parts.join('')).subarray(0, n);
};

describe('zstd context reused across frames', () => {
  it('is reused through the Node internal it relies on: a Node upgrade that takes it away fails here (cairn then falls back to the one-shot functions)', () => {
    expect(new ZstdContext('compress', 3).reusesContext).toBe(true);
    expect(new ZstdContext('decompress').reusesContext).toBe(true);
    expect(new ZstdContext('decompress', 0, { reuse: false }).reusesContext).toBe(false);
  });

  it.each([true, false])('writes the same frames as a one-shot level-3 compression, also after data that did not shrink (reused context: %s)', (reuse) => {
    const ctx = new ZstdContext('compress', 3, { reuse });
    const out = Buffer.alloc(64 * 1024);
    for (const size of [128, 300, 4096, 9000, 16384, 40000]) {
      const data = text(size, size);
      const n = ctx.compressInto(data, out, Math.floor(size * 0.97));
      expect(n).toBeGreaterThan(0);
      const oneShot = zstdCompressSync(data, { params: { [zc.ZSTD_c_compressionLevel]: 3, [zc.ZSTD_c_checksumFlag]: 0 } });
      expect(out.subarray(0, n).equals(oneShot)).toBe(true);
      expect(zstdDecompressSync(out.subarray(0, n)).equals(data)).toBe(true);
      // Random bytes do not fit under the limit; the next frame must be unaffected.
      expect(ctx.compressInto(randomBytes(size), out, Math.floor(size * 0.97))).toBe(-1);
    }
  });

  it.each([true, false])('decompresses frames of exactly the stated length and rejects truncated, longer or damaged ones, then goes on (reused context: %s)', (reuse) => {
    const ctx = new ZstdContext('decompress', 0, { reuse });
    for (const size of [200, 5000, 70000]) {
      const data = text(size, 7);
      const frame = zstdCompressSync(data);
      expect(ctx.decompress(frame, size).equals(data)).toBe(true);
      expect(() => ctx.decompress(frame.subarray(0, frame.length - 4), size)).toThrow();
      expect(() => ctx.decompress(frame, size - 1)).toThrow();
      expect(() => ctx.decompress(frame, size + 1)).toThrow();
      const bad = Buffer.from(frame);
      bad[Math.floor(bad.length / 2)]! ^= 0xff;
      bad[4]! ^= 0x55;
      expect(() => {
        const got = ctx.decompress(bad, size);
        if (!got.equals(data)) throw new Error('damaged');
      }).toThrow();
      expect(ctx.decompress(frame, size).equals(data)).toBe(true);
      // Into a caller's buffer: with the spare byte, and without it (exactly rawLength).
      const out = Buffer.alloc(size + 1);
      expect(ctx.decompressInto(frame, out, size)).toBe(size);
      expect(out.subarray(0, size).equals(data)).toBe(true);
      const exact = Buffer.alloc(size);
      expect(ctx.decompressInto(frame, exact, size)).toBe(size);
      expect(exact.equals(data)).toBe(true);
      expect(() => ctx.decompressInto(frame, Buffer.alloc(size + 1), size - 1)).toThrow(/larger/);
    }
  });
});

describe('entropy test', () => {
  it('tells random from text for small files too (samples, not every byte)', () => {
    for (const size of [5000, 12 * 1024, 40 * 1024]) {
      expect(worthCompressing(randomBytes(size))).toBe(false);
      expect(worthCompressing(text(size))).toBe(true);
    }
    expect(sampledEntropy(randomBytes(12 * 1024))).toBeGreaterThan(7.9);
  });
});
