import { describe, expect, it } from 'vitest';
import type { TimerClock } from '../../../src/base/clock.js';
import { WorkQueue } from '../../../src/kube/queue.js';

/** A clock whose timers fire only when the test advances time. */
function fakeClock(): TimerClock & { advance(ms: number): void } {
  let now = 0;
  const timers: { at: number; fn: () => void; cancelled: boolean }[] = [];
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const t = { at: now + ms, fn, cancelled: false };
      timers.push(t);
      return { cancel: () => (t.cancelled = true) };
    },
    advance(ms) {
      now += ms;
      for (const t of timers.filter((x) => !x.cancelled && x.at <= now)) {
        t.cancelled = true;
        t.fn();
      }
    },
  };
}

/** Lets the queue do what is due at each time (ms on the clock, rising) and gives the count of calls by then. */
async function callsAtTimes(clock: ReturnType<typeof fakeClock>, q: WorkQueue, calls: () => number, times: number[]): Promise<number[]> {
  const counts: number[] = [];
  for (const t of times) {
    clock.advance(t - clock.now());
    await q.idle();
    counts.push(calls());
  }
  return counts;
}

describe('WorkQueue', () => {
  it('never works on one key twice at once, and reruns a key added while it ran', async () => {
    const runs: string[] = [];
    let release: () => void = () => {};
    let first = true;
    const q = new WorkQueue({
      concurrency: 2,
      work: async (k) => {
        runs.push(k);
        if (first) {
          first = false;
          await new Promise<void>((r) => (release = r));
        }
      },
    });
    q.add('a');
    q.add('a'); // dedup while queued... but 'a' is already active: marks it dirty
    q.add('b');
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual(['a', 'b']);
    release();
    await q.idle();
    expect(runs).toEqual(['a', 'b', 'a']);
  });

  it('retries failures with growing back-off', async () => {
    const clock = fakeClock();
    let calls = 0;
    const errors: number[] = [];
    const q = new WorkQueue({
      concurrency: 1,
      clock,
      random: () => 0,
      baseBackoffMs: 100,
      work: async () => {
        calls++;
        if (calls < 3) throw new Error('boom');
      },
      onError: (_k, _e, attempt) => errors.push(attempt),
    });
    q.add('x');
    expect(await callsAtTimes(clock, q, () => calls, [0, 99, 100, 300])).toEqual([1, 1, 2, 3]);
    expect(errors).toEqual([1, 2]);
  });

  it('requeues after the delay a reconcile asks for', async () => {
    const clock = fakeClock();
    let calls = 0;
    const q = new WorkQueue({ concurrency: 1, clock, work: async () => (++calls === 1 ? { requeueAfterMs: 5000 } : undefined) });
    q.add('k');
    expect(await callsAtTimes(clock, q, () => calls, [0, 4999, 5000])).toEqual([1, 1, 2]);
  });

  it('drops work after stop', async () => {
    let calls = 0;
    const q = new WorkQueue({ concurrency: 1, work: async () => void calls++ });
    q.stop();
    q.add('k');
    await q.idle();
    expect(calls).toBe(0);
  });
});
