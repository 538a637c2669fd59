/**
 * The retrying store against a fake clock: a five-minute budget is exercised in milliseconds, and the waits it asked
 * for are checked (capped, jittered, growing, never past the budget).
 */
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/base/clock.js';
import {
  FaultInjectingObjectStore,
  FilesystemObjectStore,
  ObjectNotFoundError,
  ObjectStoreError,
  RetriesExhaustedError,
  RetryingObjectStore,
  type RetryEvent,
} from '../../../src/plugins/object-store/index.js';
import { tempRoots } from '../../support/temp-roots.js';

const freshRoot = tempRoots('cairn-retry-');

/** A clock whose sleeps return at once after moving time forward; `sleeps` records what was asked for. */
function fakeClock(): Clock & { sleeps: number[]; advance(ms: number): void } {
  let t = 1_000_000;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    sleep: (ms, signal) => {
      if (signal?.aborted) return Promise.reject(signal.reason as Error);
      sleeps.push(ms);
      t += ms;
      return Promise.resolve();
    },
  };
}

function faultyStore() {
  return new FaultInjectingObjectStore(new FilesystemObjectStore({ root: freshRoot() }));
}

describe('RetryingObjectStore', () => {
  it('rides out an outage shorter than the budget and keeps the work done', async () => {
    const clock = fakeClock();
    const faulty = faultyStore();
    const store = new RetryingObjectStore(faulty, { clock, retryForMs: 5 * 60_000 });
    await store.put('before', Buffer.from('kept'));
    // 30 s of refused connections: fail until the clock has moved 30 s past the first failure.
    const outageEnds = clock.now() + 30_000;
    const realPut = faulty.put.bind(faulty);
    faulty.put = (key, body, options) => {
      if (clock.now() < outageEnds) return Promise.reject(new ObjectStoreError(`s3: ECONNREFUSED on ${key}`, { retryable: true }));
      return realPut(key, body, options);
    };
    await store.put('during', Buffer.from('late'));
    expect((await store.get('during')).toString()).toBe('late');
    expect((await store.get('before')).toString()).toBe('kept');
    const waited = clock.sleeps.reduce((a, b) => a + b, 0);
    expect(waited).toBeGreaterThanOrEqual(30_000);
    expect(waited).toBeLessThan(30_000 + 30_000);
  });

  it('fails after the budget with the last error, saying how long it tried', async () => {
    const clock = fakeClock();
    const faulty = faultyStore();
    let n = 0;
    faulty.get = () => Promise.reject(new ObjectStoreError(`s3: ECONNREFUSED (attempt ${++n})`, { retryable: true }));
    const store = new RetryingObjectStore(faulty, { clock, retryForMs: 120_000 });
    const err = (await store.get('k').catch((e: unknown) => e)) as RetriesExhaustedError;
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect(err.message).toContain(`ECONNREFUSED (attempt ${n})`);
    expect(err.message).toMatch(/still failing after \d+ attempts over 120 s/);
    expect(err.retryable).toBe(false);
    expect((err.cause as Error).message).toContain(`attempt ${n}`);
    expect(err.elapsedMs).toBe(120_000);
    // Never waits past the budget: the last attempt falls on its end.
    expect(clock.sleeps.reduce((a, b) => a + b, 0)).toBeCloseTo(120_000, 3);
  });

  it('backs off exponentially with full jitter under a cap', async () => {
    const clock = fakeClock();
    const faulty = faultyStore();
    faulty.addFault({ ops: ['head'] });
    const store = new RetryingObjectStore(faulty, { clock, retryForMs: 10 * 60_000, baseDelayMs: 100, maxDelayMs: 2_000, random: () => 0.999999 });
    await expect(store.head('k')).rejects.toBeInstanceOf(RetriesExhaustedError);
    const caps = clock.sleeps.slice(0, 8).map((ms) => Math.round(ms));
    expect(caps).toEqual([100, 200, 400, 800, 1600, 2000, 2000, 2000]);
    const jittered: number[] = [];
    const store2 = new RetryingObjectStore(faulty, { clock: { ...clock, sleep: (ms) => (jittered.push(ms), clock.sleep(ms)) }, retryForMs: 5_000, baseDelayMs: 1_000, random: () => 0.25 });
    await expect(store2.head('k')).rejects.toBeInstanceOf(RetriesExhaustedError);
    expect(jittered[0]).toBe(250);
    expect(jittered[1]).toBe(500);
  });

  it('does not retry what retrying cannot fix', async () => {
    const clock = fakeClock();
    const faulty = faultyStore();
    faulty.addFault({ ops: ['put'], retryable: false, message: 'AccessDenied' });
    const store = new RetryingObjectStore(faulty, { clock });
    await expect(store.put('k', Buffer.from('v'))).rejects.toThrow('AccessDenied');
    expect(faulty.calls.put).toBe(1);
    await expect(store.get('missing')).rejects.toBeInstanceOf(ObjectNotFoundError);
    expect(clock.sleeps).toEqual([]);
  });

  it('with a budget of 0 fails at once with the error itself', async () => {
    const faulty = faultyStore();
    faulty.addFault({ ops: ['get'], message: 'connection reset' });
    const store = new RetryingObjectStore(faulty, { clock: fakeClock(), retryForMs: 0 });
    const err = await store.get('k').catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(RetriesExhaustedError);
    expect((err as Error).message).toBe('connection reset');
    expect(faulty.calls.get).toBe(1);
  });

  it('stops waiting when cancelled', async () => {
    const faulty = faultyStore();
    faulty.addFault({ ops: ['put'] });
    const ac = new AbortController();
    const clock = fakeClock();
    const store = new RetryingObjectStore(faulty, { clock: { ...clock, sleep: (ms, signal) => (ac.abort(new Error('cancelled')), clock.sleep(ms, signal)) } });
    await expect(store.put('k', Buffer.from('v'), { signal: ac.signal })).rejects.toThrow('cancelled');
    expect(faulty.calls.put).toBe(1);
  });

  it('reports each retry with the operation, attempt and wait', async () => {
    const events: RetryEvent[] = [];
    const faulty = faultyStore();
    faulty.addFault({ ops: ['delete'], times: 2 });
    const store = new RetryingObjectStore(faulty, { clock: fakeClock(), onRetry: (e) => events.push(e) });
    await store.delete('locks/abc');
    expect(events.map((e) => [e.operation, e.attempt])).toEqual([
      ['delete locks/abc', 1],
      ['delete locks/abc', 2],
    ]);
    expect(events[0]!.error.message).toMatch(/connection refused/);
  });

  it('resumes a listing after a failure without repeating keys', async () => {
    const clock = fakeClock();
    const inner = new FilesystemObjectStore({ root: freshRoot() });
    for (let i = 0; i < 25; i++) await inner.put(`p/${String(i).padStart(3, '0')}`, Buffer.from('x'));
    let calls = 0;
    const flaky = Object.create(inner) as FilesystemObjectStore;
    flaky.list = async function* (prefix: string) {
      calls++;
      let n = 0;
      for await (const info of inner.list(prefix)) {
        if (calls <= 2 && n++ === 10 * calls) throw new ObjectStoreError('connection reset', { retryable: true });
        yield info;
      }
    };
    const store = new RetryingObjectStore(flaky, { clock });
    const keys: string[] = [];
    for await (const o of store.list('p/')) keys.push(o.key);
    expect(keys).toEqual(Array.from({ length: 25 }, (_, i) => `p/${String(i).padStart(3, '0')}`));
    expect(calls).toBe(3);
  });

  it('gives each operation its own budget, counted from its first failure', async () => {
    const clock = fakeClock();
    const faulty = faultyStore();
    const store = new RetryingObjectStore(faulty, { clock, retryForMs: 60_000 });
    // Long after an earlier failure, a new operation still gets the whole budget.
    faulty.addFault({ ops: ['head'], times: 1 });
    await store.head('a');
    clock.advance(10 * 60_000);
    faulty.addFault({ ops: ['head'], times: 3 });
    await expect(store.head('b')).resolves.toBeUndefined();
  });
});
