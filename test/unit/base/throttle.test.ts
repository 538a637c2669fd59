import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { throttledWriter } from '../../../src/base/throttle.js';
import { FakeClock } from '../../support/fake-clock.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('throttled progress writes', () => {
  it('writes only the latest value once per interval, and not the same value twice', async () => {
    const writes: number[] = [];
    const w = throttledWriter<{ n: number }>({ intervalMs: 1000, write: async (v) => writes.push(v.n) });
    for (let n = 1; n <= 100; n++) w.report({ n });
    expect(writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(writes).toEqual([100]);
    w.report({ n: 100 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(writes).toEqual([100]);
    w.report({ n: 101 });
    await vi.advanceTimersByTimeAsync(999);
    expect(writes).toEqual([100]);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes).toEqual([100, 101]);
  });

  it('drops pending values on stop, reports write errors, and ignores reports after stop', async () => {
    const errors: unknown[] = [];
    const writes: number[] = [];
    const w = throttledWriter<number>({
      intervalMs: 1000,
      write: async (v) => {
        if (v === 1) throw new Error('conflict');
        writes.push(v);
      },
      onError: (e) => errors.push(e),
    });
    w.report(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(errors).toHaveLength(1);
    w.report(2);
    await w.stop();
    w.report(3);
    await vi.advanceTimersByTimeAsync(5000);
    expect(writes).toEqual([]);
  });
});

describe('throttled writes counted from the last write', () => {
  it('writes a value after a quiet spell at once, then at most once per interval, on the injected clock', async () => {
    const clock = new FakeClock();
    const advance = (ms: number) => clock.settle(ms);
    const writes: number[] = [];
    const w = throttledWriter<number>({ intervalMs: 1000, sinceLastWrite: true, clock, write: async (v) => writes.push(v) });
    w.report(1);
    await advance(0);
    expect(writes).toEqual([1]);
    w.report(2);
    w.report(3);
    await advance(999);
    expect(writes).toEqual([1]);
    await advance(1);
    expect(writes).toEqual([1, 3]);
    await advance(5000);
    w.report(4);
    await advance(0);
    expect(writes).toEqual([1, 3, 4]);
    await w.stop();
  });
});
