import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ESM script of the test runner, without type declarations
import { shareOut } from '../../../scripts/test-shards.mjs';

type Bin = { files: string[]; seconds: number };
const share = shareOut as (files: string[], shards: number, timings: Record<string, number>) => Bin[];

describe('sharing cluster test files out', () => {
  it('puts the longest files first onto the least loaded shard', () => {
    const bins = share(['a', 'b', 'c', 'd', 'e'], 2, { a: 100, b: 60, c: 50, d: 40, e: 10 });
    expect(bins.map((b) => b.files)).toEqual([['a', 'd'], ['b', 'c', 'e']]);
    expect(bins.map((b) => b.seconds)).toEqual([140, 120]);
  });

  it('counts a file never timed as the median of those that were', () => {
    const bins = share(['new', 'x', 'y', 'z'], 2, { x: 10, y: 20, z: 30 });
    expect(bins.flatMap((b) => b.files).sort()).toEqual(['new', 'x', 'y', 'z']);
    expect(bins.map((b) => b.seconds)).toEqual([40, 40]);
  });

  it('never makes more shards than files, nor fewer than one', () => {
    expect(share(['only'], 3, {})).toHaveLength(1);
    expect(share(['a', 'b'], 0, {})).toHaveLength(1);
  });
});
