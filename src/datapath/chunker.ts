/**
 * FastCDC content-defined chunking (docs/repository-format.md §5): a gear rolling hash, cut-point skipping below the
 * minimum size and normalized chunking (a harder mask before the average size, an easier one after).
 */
import { Blake3Hasher } from './blake3.js';

export interface ChunkerParams {
  min: number;
  avg: number;
  max: number;
  /** base64 of 32 random bytes; keys the gear table. */
  seed: string;
}

export const DEFAULT_CHUNK_SIZES = { min: 512 * 1024, avg: 1024 * 1024, max: 8 * 1024 * 1024 } as const;

export interface Chunker {
  readonly params: ChunkerParams;
  /**
   * Length of the next chunk of data[start, end). The caller must supply at least `max` bytes unless the data
   * ends at `end` (then the rest may be shorter).
   */
  next(data: Uint8Array, start: number, end: number): number;
}

function gearTable(seed: string): Int32Array {
  const table = new Int32Array(256);
  const key = Buffer.from(seed, 'base64');
  const idx = Buffer.alloc(4);
  for (let i = 0; i < 256; i++) {
    idx.writeUInt32LE(i);
    const h = Blake3Hasher.newKeyed(key);
    h.update(idx);
    table[i] = h.digestBuffer().readInt32LE(0);
  }
  return table;
}

/** A mask with `bits` one-bits at the top of a 32-bit word (the bits that depend on the last 32 bytes). */
function topMask(bits: number): number {
  return ~((1 << (32 - bits)) - 1) | 0;
}

export function createChunker(params: ChunkerParams): Chunker {
  const { min, avg, max } = params;
  if (!(min > 0 && min <= avg && avg <= max)) throw new Error(`invalid chunker sizes ${min}/${avg}/${max}`);
  const gear = gearTable(params.seed);
  const avgBits = Math.round(Math.log2(avg));
  const maskS = topMask(avgBits + 2);
  const maskL = topMask(avgBits - 2);
  return {
    params,
    next(data: Uint8Array, start: number, end: number): number {
      let n = end - start;
      if (n <= min) return n;
      if (n > max) n = max;
      const normal = start + Math.min(avg, n);
      const limit = start + n;
      let fp = 0;
      let i = start + min;
      for (; i < normal; i++) {
        fp = ((fp << 1) + gear[data[i]!]!) | 0;
        if ((fp & maskS) === 0) return i + 1 - start;
      }
      for (; i < limit; i++) {
        fp = ((fp << 1) + gear[data[i]!]!) | 0;
        if ((fp & maskL) === 0) return i + 1 - start;
      }
      return n;
    },
  };
}
