import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { largeDataset, mixedDataset, smallDataset, tinyDataset, type Dataset } from '../../../bench/datapath/datasets.js';
import { applyModification, prepareDataset, undoModification } from '../../../bench/datapath/dataset-store.js';
import { Lcg } from '../../../bench/datapath/prng.js';
import { digestTree } from '../../../bench/datapath/tree-digest.js';

// A stand-in corpus: varied text, big enough for every slice the recipes take.
const corpus = Buffer.from(
  Array.from({ length: 40_000 }, (_, i) => `def f${i}(x):\n    return x * ${i} + ${i % 7}\n`).join(''),
);

/** Path, size and SHA-256 of every file's bytes: equal snapshots mean the same bytes (without holding them twice). */
function snapshot(files: Iterable<{ relPath: string; size: number; chunks(): Iterable<Buffer> }>): string[] {
  return [...files].map((f) => {
    const hash = createHash('sha256');
    for (const piece of f.chunks()) hash.update(piece);
    return `${f.relPath} ${f.size} ${hash.digest('hex')}`;
  });
}

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('benchmark datasets', () => {
  it('follow the recipe LCG: seed * 1103515245 + 12345 mod 2^32', () => {
    const lcg = new Lcg(12345);
    const first = lcg.next();
    expect(first).toBe((12345 * 1103515245 + 12345) % 2 ** 32);
  });

  it('produce the same paths and bytes every time they are generated', () => {
    const makers: (() => Dataset)[] = [
      () => smallDataset(corpus, 300),
      () => tinyDataset(corpus, 500),
      // Two files (one random, one text) of the smallest size the modification fits in: the recipe, not its volume.
      () => largeDataset(corpus, 32 * 1024 * 1024 + 4096, 2),
    ];
    for (const make of makers) {
      const [a, b] = [make(), make()];
      expect(snapshot(a.files())).toEqual(snapshot(b.files()));
      expect(snapshot(a.modifiedFiles())).toEqual(snapshot(b.modifiedFiles()));
    }
  });

  it('lays out the mixed dataset as its recipe (docs/benchmarks.md) says', () => {
    const files = [...mixedDataset(corpus).files()];
    const big = files.filter((f) => f.relPath.startsWith('large/'));
    const small = files.filter((f) => f.relPath.startsWith('small/'));
    expect(big).toHaveLength(20);
    expect(big.every((f) => f.size === 50 * 1024 * 1024)).toBe(true);
    expect(small).toHaveLength(20_000);
    expect(small.every((f) => f.size >= 1024 && f.size <= 16 * 1024)).toBe(true);
    expect(new Set(small.map((f) => f.relPath.split('/')[1])).size).toBe(100);
    const again = [...mixedDataset(corpus).files()].filter((f) => f.relPath.startsWith('small/')).slice(0, 50);
    expect(snapshot(again)).toEqual(snapshot(small.slice(0, 50)));
    // 5 %: one large file and every 20th small file.
    const modified = [...mixedDataset(corpus).modifiedFiles()];
    expect(modified).toHaveLength(1 + 1000);
    expect(modified[0]).toMatchObject({ relPath: 'large/big01.bin', size: 50 * 1024 * 1024 + 4096 });
  });

  it('repeats the 5 % change with new bytes in the same files', () => {
    const dataset = smallDataset(corpus, 300);
    const paths = (variant: number) => [...dataset.modifiedFiles(variant)].map((f) => f.relPath);
    expect(paths(2)).toEqual(paths(1));
    expect(snapshot(dataset.modifiedFiles(2))).not.toEqual(snapshot(dataset.modifiedFiles(1)));
    expect(snapshot(dataset.modifiedFiles(2))).toEqual(snapshot(smallDataset(corpus, 300).modifiedFiles(2)));
  });

  it('changes about 5 % of the files on disk and puts them back exactly', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-test-'));
    scratch.push(dir);
    const lines: string[] = [];
    const stored = prepareDataset({ dataset: smallDataset(corpus, 400), scratchDir: dir, corpusSha256: 'test', log: (l) => lines.push(l) });
    expect(stored.base.files).toBe(400);
    expect(stored.modified.changedFiles).toBe(20);
    const base = digestTree(stored.root);
    expect(base.files).toBe(400);
    expect(base.bytes).toBe(stored.base.bytes);

    applyModification(dir, stored);
    const changed = digestTree(stored.root);
    expect(changed.sha256).not.toBe(base.sha256);
    expect(changed.bytes).toBe(stored.modified.bytes);

    undoModification(dir, stored);
    expect(digestTree(stored.root).sha256).toBe(base.sha256);

    // A second preparation reuses the copy on disk; one left modified by a crash is put back first.
    applyModification(dir, stored);
    prepareDataset({ dataset: smallDataset(corpus, 400), scratchDir: dir, corpusSha256: 'test', log: (l) => lines.push(l) });
    expect(lines.some((l) => l.includes('undoing a modification'))).toBe(true);
    expect(lines.at(-1)).toContain('reusing');
    expect(digestTree(stored.root).sha256).toBe(base.sha256);
  });
});
