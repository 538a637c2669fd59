// The volume's contents: the mixed recipe of bench/datapath (random large files, text files of 1-16 KiB sliced from
// the corpus in directories of 200) scaled down to a size one fs-backup round trip takes seconds, not minutes.
import type { Dataset, GeneratedFile } from '../datapath/datasets.js';
import { KeyStream, Lcg } from '../datapath/prng.js';

const MiB = 1024 * 1024;
const PIECE = 4 * MiB;
const PER_DIR = 200;

export interface ScaledMixed {
  bigCount: number;
  bigMiB: number;
  smallCount: number;
}

function* randomPieces(name: string, size: number): Iterable<Buffer> {
  const stream = new KeyStream(name);
  for (let done = 0; done < size; done += PIECE) yield stream.take(Math.min(PIECE, size - done));
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

export function scaledMixedDataset(corpus: Buffer, scale: ScaledMixed): Pick<Dataset, 'title' | 'recipe' | 'files'> {
  const bigSize = Math.round(scale.bigMiB * MiB);
  return {
    title: `mixed (scaled): ${scale.bigCount} x ${scale.bigMiB} MiB random + ${scale.smallCount.toLocaleString('en-US')} text files of 1-16 KiB`,
    recipe: { ...scale, seed: 12345 },
    *files(): Iterable<GeneratedFile> {
      for (let i = 1; i <= scale.bigCount; i++) yield { relPath: `large/big${pad(i, 2)}.bin`, size: bigSize, chunks: () => randomPieces(`mixed/big${i}`, bigSize) };
      const lcg = new Lcg(12345);
      for (let k = 0; k < scale.smallCount; k++) {
        const size = 1024 + (lcg.next() % 15361);
        const offset = lcg.next() % (corpus.length - size);
        const bytes = corpus.subarray(offset, offset + size);
        yield { relPath: `small/d${pad(Math.floor(k / PER_DIR), 3)}/f${pad(k % PER_DIR, 3)}.txt`, size, chunks: () => [bytes] };
      }
    },
  };
}
