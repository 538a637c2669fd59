import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ESM script of the test runner, without type declarations
import { shardVerdict, shareOut } from '../../../scripts/test-shards.mjs';

type Bin = { files: string[]; seconds: number };
const share = shareOut as (files: string[], shards: number, timings: Record<string, number>) => Bin[];
type Summary = { numTotalTests: number; numFailedTests: number };
const verdict = shardVerdict as (status: number, summary: Summary | undefined, filtered: boolean) => string;

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

describe("a shard's verdict", () => {
  const ran = (total: number, failed = 0): Summary => ({ numTotalTests: total, numFailedTests: failed });
  it('passes when its tests ran and passed', () => expect(verdict(0, ran(5), false)).toBe('passed'));
  it('fails on a failed test or a non-zero exit', () => {
    expect(verdict(0, ran(5, 1), false)).toBe('failed');
    expect(verdict(1, ran(5), false)).toBe('failed');
  });
  it('fails without a report', () => expect(verdict(0, undefined, false)).toBe('no report'));
  it('fails when it ran no test although no filter was typed (its global setup failed, vitest still exits 0)', () =>
    expect(verdict(0, ran(0), false)).toBe('ran no test'));
  it('passes a typed filter that matches nothing in this project', () => expect(verdict(0, ran(0), true)).toBe('passed'));
});
