// The benchmark datasets as pure recipes: each lists its files (path, size, bytes on demand) for the base state and
// for the "5 % changed" step. Nothing here touches the disk (see dataset-store.ts), so the recipes are cheap to test.
import { Lcg, KeyStream } from './prng.js';
import { realDataset, type RealManifest } from './real-dataset.js';

export type DatasetName = 'mixed' | 'large' | 'small' | 'tiny' | 'real';
export const DATASET_NAMES: readonly DatasetName[] = ['mixed', 'large', 'small', 'tiny', 'real'];
/** What --all runs: the generated datasets (real is built from this machine's trees and asked for by name). */
export const GENERATED_DATASETS: readonly DatasetName[] = ['mixed', 'large', 'small', 'tiny'];

export interface GeneratedFile {
  relPath: string;
  size: number;
  /** Permission bits; the process's default (0666 less the umask) when absent. */
  mode?: number;
  /** The file's bytes, in pieces of bounded size (large files never sit whole in memory). */
  chunks(): Iterable<Buffer>;
}

export interface Dataset {
  name: DatasetName;
  title: string;
  /** Everything that decides the bytes; hashed (with the corpus hash) to know whether a copy on disk is current. */
  recipe: Record<string, unknown>;
  /** Base state, in write order. */
  files(): Iterable<GeneratedFile>;
  /**
   * The modification step: new contents for about 5 % of the files (same paths, same directories). Variant 1 is the
   * recipe's; variants 2, 3, ... change the same files to other new contents, so the step can be repeated against
   * the previous snapshot and still be "5 % changed, new data".
   */
  modifiedFiles(variant?: number): Iterable<GeneratedFile>;
  /** The base contents of exactly the files modifiedFiles() rewrites, to undo the step. */
  baseOfModifiedFiles(): Iterable<GeneratedFile>;
  /**
   * Directories the change (and its undo) deletes whole before writing its files: a dependency upgrade replaces a
   * module's tree, adding and removing files. Every base file inside them is in baseOfModifiedFiles().
   */
  removedDirs?(): string[];
}

/** Bump when a generator changes the bytes it produces, so stale copies on disk are regenerated. */
export const RECIPE_VERSION = 1;

const MiB = 1024 * 1024;
const PIECE = 4 * MiB;
const modifiedMark = (variant: number): Buffer => Buffer.from(variant === 1 ? '\n# modified\n' : `\n# modified ${variant}\n`);
const variantName = (name: string, variant: number): string => (variant === 1 ? name : `${name}#${variant}`);

function once(buffer: Buffer): () => Iterable<Buffer> {
  return () => [buffer];
}

function* randomPieces(name: string, size: number): Iterable<Buffer> {
  const stream = new KeyStream(name);
  for (let done = 0; done < size; done += PIECE) yield stream.take(Math.min(PIECE, size - done));
}

/** Compressible text of `size` bytes: corpus slices of 1–16 KiB at LCG-chosen offsets, back to back. */
function* textPieces(corpus: Buffer, seed: number, size: number): Iterable<Buffer> {
  const lcg = new Lcg(seed);
  let done = 0;
  while (done < size) {
    const piece = Buffer.allocUnsafe(Math.min(PIECE, size - done));
    let filled = 0;
    while (filled < piece.length) {
      const want = Math.min(1024 + (lcg.next() % 15361), piece.length - filled);
      const offset = lcg.next() % (corpus.length - want);
      filled += corpus.copy(piece, filled, offset, offset + want);
    }
    done += piece.length;
    yield piece;
  }
}

function collect(pieces: Iterable<Buffer>): Buffer {
  return Buffer.concat([...pieces]);
}

/**
 * The large-file change of the recipe: 4 KiB of 0x5a inserted at 10 MiB (shifts every later chunk boundary) and
 * 1 MiB of new random bytes written at 30 MiB.
 */
function modifyLargeFile(base: Buffer, name: string): Buffer {
  const inserted = Buffer.concat([base.subarray(0, 10 * MiB), Buffer.alloc(4096, 0x5a), base.subarray(10 * MiB)]);
  new KeyStream(`${name}/modify`).take(MiB).copy(inserted, 30 * MiB);
  return inserted;
}

interface Slice {
  offset: number;
  size: number;
}

/** `count` corpus slices from one LCG stream: size = min + r1 % span, offset = r2 % (len - size). */
function slices(lcg: Lcg, corpusLength: number, count: number, minSize: number, span: number): Slice[] {
  const out: Slice[] = [];
  for (let i = 0; i < count; i++) {
    const size = minSize + (lcg.next() % span);
    const offset = lcg.next() % (corpusLength - size);
    out.push({ offset, size });
  }
  return out;
}

function sliceFile(relPath: string, corpus: Buffer, slice: Slice, suffix?: Buffer): GeneratedFile {
  const body = corpus.subarray(slice.offset, slice.offset + slice.size);
  const bytes = suffix ? Buffer.concat([body, suffix]) : body;
  return { relPath, size: bytes.length, chunks: once(bytes) };
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** The mixed dataset (docs/benchmarks.md): 20 x 50 MiB random + 20,000 text files (100 dirs x 200) of 1–16 KiB; LCG seed 12345. */
export function mixedDataset(corpus: Buffer): Dataset {
  const bigCount = 20;
  const bigSize = 50 * MiB;
  const dirs = 100;
  const perDir = 200;
  const smallCount = dirs * perDir;
  const baseSlices = slices(new Lcg(12345), corpus.length, smallCount, 1024, 15361);
  const modified = [...Array(smallCount / 20).keys()].map((i) => i * 20);
  // The modification draws its new slices from the same stream, after the base ones (and after earlier variants').
  const newSlices = (variant: number): Slice[] => {
    const lcg = new Lcg(12345);
    slices(lcg, corpus.length, smallCount + (variant - 1) * modified.length, 1024, 15361);
    return slices(lcg, corpus.length, modified.length, 1024, 15361);
  };
  const bigPath = (i: number): string => `large/big${pad(i, 2)}.bin`;
  const smallPath = (k: number): string => `small/d${pad(Math.floor(k / perDir), 3)}/f${pad(k % perDir, 3)}.txt`;
  const bigFile = (i: number): GeneratedFile => ({
    relPath: bigPath(i),
    size: bigSize,
    chunks: () => randomPieces(`mixed/big${i}`, bigSize),
  });
  const smallFile = (k: number): GeneratedFile => sliceFile(smallPath(k), corpus, baseSlices[k]!);
  return {
    name: 'mixed',
    title: 'mixed: 20 x 50 MiB random + 20,000 text files of 1-16 KiB',
    recipe: { bigCount, bigSize, dirs, perDir, seed: 12345, modify: 'big01 +4KiB@10MiB, 1MiB@30MiB; every 20th small' },
    *files() {
      for (let i = 1; i <= bigCount; i++) yield bigFile(i);
      for (let k = 0; k < smallCount; k++) yield smallFile(k);
    },
    *modifiedFiles(variant = 1) {
      const big = modifyLargeFile(collect(bigFile(1).chunks()), variantName('mixed/big1', variant));
      yield { relPath: bigPath(1), size: big.length, chunks: once(big) };
      const fresh = newSlices(variant);
      for (const [i, k] of modified.entries()) yield sliceFile(smallPath(k), corpus, fresh[i]!, modifiedMark(variant));
    },
    *baseOfModifiedFiles() {
      yield bigFile(1);
      for (const k of modified) yield smallFile(k);
    },
  };
}

/** (a) 2 GiB of large files: 16 x 128 MiB, the first 8 random, the other 8 compressible text. */
export function largeDataset(corpus: Buffer, fileSize = 128 * MiB, count = 16): Dataset {
  const path = (i: number): string => `large/file${pad(i, 2)}.${i <= count / 2 ? 'bin' : 'txt'}`;
  const file = (i: number): GeneratedFile => ({
    relPath: path(i),
    size: fileSize,
    chunks: () => (i <= count / 2 ? randomPieces(`large/file${i}`, fileSize) : textPieces(corpus, 1000 + i, fileSize)),
  });
  return {
    name: 'large',
    title: `large: ${count} x ${fileSize / MiB} MiB, half random, half text`,
    recipe: { count, fileSize, modify: 'file01 +4KiB@10MiB, 1MiB@30MiB' },
    *files() {
      for (let i = 1; i <= count; i++) yield file(i);
    },
    *modifiedFiles(variant = 1) {
      const changed = modifyLargeFile(collect(file(1).chunks()), variantName('large/file1', variant));
      yield { relPath: path(1), size: changed.length, chunks: once(changed) };
    },
    *baseOfModifiedFiles() {
      yield file(1);
    },
  };
}

/** (b) 200,000 text files of 0–16 KiB spread over a 4-level tree (8 x 8 x 8 x 8 leaf directories). */
export function smallDataset(corpus: Buffer, count = 200_000): Dataset {
  const baseSlices = slices(new Lcg(4242), corpus.length, count, 0, 16385);
  const modified = [...Array(Math.ceil(count / 20)).keys()].map((i) => i * 20);
  const newSlices = (variant: number): Slice[] => {
    const lcg = new Lcg(4242);
    slices(lcg, corpus.length, count + (variant - 1) * modified.length, 0, 16385);
    return slices(lcg, corpus.length, modified.length, 0, 16385);
  };
  const path = (k: number): string => {
    const leaf = k % 4096;
    return `t${leaf >> 9}/t${(leaf >> 6) & 7}/t${(leaf >> 3) & 7}/t${leaf & 7}/f${pad(k, 6)}.txt`;
  };
  return {
    name: 'small',
    title: `small: ${count.toLocaleString('en-US')} text files of 0-16 KiB in a 4-level tree`,
    recipe: { count, seed: 4242, fanout: 8, depth: 4, modify: 'every 20th file' },
    *files() {
      for (let k = 0; k < count; k++) yield sliceFile(path(k), corpus, baseSlices[k]!);
    },
    *modifiedFiles(variant = 1) {
      const fresh = newSlices(variant);
      for (const [i, k] of modified.entries()) yield sliceFile(path(k), corpus, fresh[i]!, modifiedMark(variant));
    },
    *baseOfModifiedFiles() {
      for (const k of modified) yield sliceFile(path(k), corpus, baseSlices[k]!);
    },
  };
}

/** (c) one million files, every other one empty, the rest 1–64 bytes; 10 x 100 directories of 1,000 files. */
export function tinyDataset(corpus: Buffer, count = 1_000_000): Dataset {
  const lcg = new Lcg(777);
  const sizes = new Uint32Array(count);
  const offsets = new Uint32Array(count);
  for (let k = 0; k < count; k++) {
    const slice = slices(lcg, corpus.length, 1, 1, 64)[0]!;
    sizes[k] = k % 2 === 0 ? 0 : slice.size;
    offsets[k] = slice.offset;
  }
  const path = (k: number): string => `a${Math.floor(k / 100_000)}/b${pad(Math.floor(k / 1000) % 100, 2)}/f${pad(k % 1000, 3)}`;
  const baseFile = (k: number): GeneratedFile => sliceFile(path(k), corpus, { offset: offsets[k]!, size: sizes[k]! });
  const stride = 20;
  return {
    name: 'tiny',
    title: `tiny: ${count.toLocaleString('en-US')} files, half empty, half 1-64 bytes (memory check)`,
    recipe: { count, seed: 777, layout: '10x100 dirs of 1000', modify: 'every 20th file' },
    *files() {
      for (let k = 0; k < count; k++) yield baseFile(k);
    },
    *modifiedFiles(variant = 1) {
      for (let k = 0; k < count; k += stride) {
        const bytes = Buffer.from(variant === 1 ? `modified ${k}\n` : `modified ${k} (${variant})\n`);
        yield { relPath: path(k), size: bytes.length, chunks: once(bytes) };
      }
    },
    *baseOfModifiedFiles() {
      for (let k = 0; k < count; k += stride) yield baseFile(k);
    },
  };
}

export function makeDataset(name: DatasetName, corpus: Buffer, real?: () => RealManifest): Dataset {
  switch (name) {
    case 'real':
      if (!real) throw new Error('the real dataset needs its manifest');
      return realDataset(real(), corpus);
    case 'mixed':
      return mixedDataset(corpus);
    case 'large':
      return largeDataset(corpus);
    case 'small':
      return smallDataset(corpus);
    case 'tiny':
      return tinyDataset(corpus);
  }
}
