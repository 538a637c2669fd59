import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { collectAllGarbage, collectYoungGarbage, tuneHeapForDataPath } from '../../../src/datapath/heap-tuning.js';

function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Allocates like a long backup of small files: a rolling window of objects that each live through a few scavenges
 * before they die, which is what makes V8 grow its young generation step by step.
 */
function churn(rounds: number, onRound: () => void): number {
  const window: { name: string; sizes: number[] }[] = new Array<{ name: string; sizes: number[] }>(50_000);
  let largest = 0;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < window.length; i++) window[i] = { name: `file-${r}-${i}`, sizes: [r, i, r + i] };
    onRound();
    largest = Math.max(largest, newSpaceBytes());
  }
  return largest;
}

describe('heap tuning for backups', () => {
  it('keeps the young generation at its bound while a backup holds the cap', () => {
    const cap = tuneHeapForDataPath();
    try {
      const largest = churn(200, () => cap.check());
      // The bound is 16 MiB; growth that happened between two checks may double it once, and V8 sizes the young
      // generation in pages, so one step may overshoot a little (37.75 MiB seen once, on a loaded machine). Without
      // the cap this churn takes it to 64-128 MiB.
      expect(largest).toBeLessThanOrEqual(48 << 20);
    } finally {
      cap.release();
    }
  });

  it('can be released twice and taken again', () => {
    const a = tuneHeapForDataPath();
    const b = tuneHeapForDataPath();
    a.release();
    a.release();
    b.check();
    b.release();
    const c = tuneHeapForDataPath();
    c.release();
    expect(() => c.check()).not.toThrow();
  });
});

describe('collecting garbage on demand', () => {
  it('a full collection frees what a finished run left on the heap', () => {
    collectAllGarbage();
    const before = process.memoryUsage().heapUsed;
    let left: { name: string; body: string }[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ name: `item-${i}`, body: `{"kind":"ConfigMap","n":${i}}` }));
    expect(process.memoryUsage().heapUsed - before).toBeGreaterThan(10 << 20);
    expect(left.length).toBe(200_000);
    left = undefined;
    collectAllGarbage();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(5 << 20);
    expect(left).toBeUndefined();
  });

  it('a minor collection runs too', () => {
    expect(() => collectYoungGarbage()).not.toThrow();
  });
});
