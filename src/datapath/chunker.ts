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

/**
 * A mask of `bits` one-bits in the high bits of the hash, just below bit 31 (bits 30 … 31-bits). The high bits depend
 * on the most bytes; leaving bit 31 out lets the loop below test two bytes per step with the mask shifted left by one
 * without losing a bit, so it cuts exactly where the byte-by-byte definition does.
 */
function highMask(bits: number): number {
  return (~((1 << (31 - bits)) - 1) & 0x7fffffff) | 0;
}

/** The reference definition, one byte per step (tests check the fast loop against it). */
export function referenceCut(params: ChunkerParams, data: Uint8Array, start: number, end: number): number {
  const { min, avg, max } = params;
  const gear = gearTable(params.seed);
  const bits = Math.round(Math.log2(avg));
  const maskS = highMask(bits + 2);
  const maskL = highMask(bits - 2);
  let n = end - start;
  if (n <= min) return n;
  if (n > max) n = max;
  let fp = 0;
  for (let i = start + min; i < start + n; i++) {
    fp = ((fp << 1) + gear[data[i]!]!) | 0;
    if ((fp & (i < start + Math.min(avg, n) ? maskS : maskL)) === 0) return i + 1 - start;
  }
  return n;
}

/** The tables and masks the fast cut loop needs. */
export interface CutTables {
  min: number;
  avg: number;
  max: number;
  gear: Int32Array;
  gearLs: Int32Array;
  maskS: number;
  maskL: number;
  maskSls: number;
  maskLls: number;
}

export function cutTables(params: ChunkerParams): CutTables {
  const { min, avg, max } = params;
  if (!(min > 0 && min <= avg && avg <= max)) throw new Error(`invalid chunker sizes ${min}/${avg}/${max}`);
  const gear = gearTable(params.seed);
  const avgBits = Math.round(Math.log2(avg));
  const maskS = highMask(avgBits + 2);
  const maskL = highMask(avgBits - 2);
  return { min, avg, max, gear, gearLs: gear.map((g) => (g << 1) | 0), maskS, maskL, maskSls: (maskS << 1) | 0, maskLls: (maskL << 1) | 0 };
}

type CutLoop = (data: Uint8Array, start: number, end: number) => number;

/**
 * The fast cut loop: `next(data, start, end)` over the tables of cutTables(). The backup's thread and the chunk
 * worker (chunk-worker.ts) both run it, so both cut a file at the same places; the tests check it against
 * referenceCut. Two bytes per step: fp<<2 + (gear<<1) is the one-byte hash shifted left once, tested with the
 * shifted mask.
 */
export function cutLoop(t: CutTables): CutLoop {
  const { min, avg, max, gear, gearLs, maskS, maskL, maskSls, maskLls } = t;
  return function next(data: Uint8Array, start: number, end: number): number {
    let n = end - start;
    if (n <= min) return n;
    if (n > max) n = max;
    const normal = start + Math.min(avg, n);
    const limit = start + n;
    let fp = 0;
    let i = start + min;
    for (; i + 1 < normal; i += 2) {
      fp = ((fp << 2) + gearLs[data[i]!]!) | 0;
      if ((fp & maskSls) === 0) return i + 1 - start;
      fp = (fp + gear[data[i + 1]!]!) | 0;
      if ((fp & maskS) === 0) return i + 2 - start;
    }
    if (i < normal) {
      fp = ((fp << 1) + gear[data[i]!]!) | 0;
      if ((fp & maskS) === 0) return i + 1 - start;
      i++;
    }
    for (; i + 1 < limit; i += 2) {
      fp = ((fp << 2) + gearLs[data[i]!]!) | 0;
      if ((fp & maskLls) === 0) return i + 1 - start;
      fp = (fp + gear[data[i + 1]!]!) | 0;
      if ((fp & maskL) === 0) return i + 2 - start;
    }
    if (i < limit) {
      fp = ((fp << 1) + gear[data[i]!]!) | 0;
      if ((fp & maskL) === 0) return i + 1 - start;
    }
    return n;
  };
}

export function createChunker(params: ChunkerParams): Chunker {
  return { params, next: cutLoop(cutTables(params)) };
}
