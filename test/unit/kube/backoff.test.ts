/** Back-off with jitter (base/backoff.ts) and the two places that wait on it: the informer's restart and retryTransient. */
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../../src/base/backoff.js';
import { call, isTransient, retryTransient, type Kube } from '../../../src/kube/client.js';
import { watchResource } from '../../../src/kube/informer.js';
import { FakeClock } from '../../support/fake-clock.js';

describe('back-off with jitter', () => {
  it.each([
    [1, 0.5, 500],
    [2, 0.5, 1000],
    [3, 0, 1600],
    [3, 0.999999, 2400],
    [7, 0.5, 30_000],
    [40, 0.5, 30_000],
  ])('attempt %i with random %d waits %i ms (base 500, at most 30 s, ±20 %%)', (attempt, random, ms) => {
    expect(backoffMs(attempt, { baseMs: 500, maxMs: 30_000, random: () => random })).toBe(ms);
  });
});

describe('the informer after a failed list', () => {
  it('restarts on the injected clock after the back-off, longer after each failure', async () => {
    const clock = new FakeClock();
    let lists = 0;
    const watch = watchResource({
      kube: { config: new KubeConfig() } as unknown as Kube,
      path: '/apis/velero.io/v1/namespaces/velero/backups',
      list: async () => {
        lists++;
        throw Object.assign(new Error('service unavailable'), { code: 503 });
      },
      onEvent: () => undefined,
      clock,
      random: () => 0.5,
    });
    void watch.start();
    await clock.settle(0);
    expect(lists).toBe(1);
    expect(clock.delays()).toEqual([500]);
    await clock.settle(500);
    expect(lists).toBe(2);
    expect(clock.delays()).toEqual([1000]);
    await clock.settle(999);
    expect(lists).toBe(2);
    await clock.settle(1);
    expect(lists).toBe(3);
    await watch.stop();
    expect(clock.delays()).toEqual([]);
  });
});

describe('retryTransient', () => {
  it('retries a transient failure after the back-off on the injected clock, and gives up on others', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const result = retryTransient(
      async () => {
        if (++calls < 3) throw Object.assign(new Error('busy'), { code: 503 });
        return 'ok';
      },
      { clock, random: () => 0.5 },
    );
    await clock.settle(0);
    expect(clock.delays()).toEqual([250]);
    await clock.settle(250 + 500);
    expect(await result).toBe('ok');
    expect(calls).toBe(3);
    await expect(retryTransient(async () => Promise.reject(Object.assign(new Error('forbidden'), { code: 403 })), { clock })).rejects.toThrow('forbidden');
  });

  it('sees the transient failure inside the error `call` wraps it in: the node agent waits out the 503 new CRDs answer', async () => {
    const kube = { server: 'https://10.96.0.1:443' } as unknown as Kube;
    const wrapped = await call(kube, 'list datauploads in cairn', async () => Promise.reject(Object.assign(new Error('storage is (re)initializing'), { code: 503 }))).catch((e: unknown) => e);
    expect(isTransient(wrapped)).toBe(true);
    const forbidden = await call(kube, 'list datauploads in cairn', async () => Promise.reject(Object.assign(new Error('forbidden'), { code: 403 }))).catch((e: unknown) => e);
    expect(isTransient(forbidden)).toBe(false);
    const clock = new FakeClock();
    let calls = 0;
    const result = retryTransient(async () => (++calls < 2 ? Promise.reject(wrapped) : 'listed'), { clock, random: () => 0.5 });
    await clock.settle(0);
    await clock.settle(250);
    expect(await result).toBe('listed');
  });
});
