import { describe, expect, it } from 'vitest';
import { OncePerKey } from '../../../src/base/once-per-key.js';

describe('OncePerKey', () => {
  it('shares one run per key among callers, and keeps a success', async () => {
    const once = new OncePerKey();
    let runs = 0;
    const work = () => {
      runs++;
      return Promise.resolve();
    };
    await Promise.all([once.run('a', work), once.run('a', work), once.run('b', work)]);
    await once.run('a', work);
    expect(runs).toBe(2);
  });

  it('forgets a failure, so the next caller tries again', async () => {
    const once = new OncePerKey();
    let runs = 0;
    const failing = () => {
      runs++;
      return Promise.reject(new Error('repository not ready'));
    };
    await expect(once.run('a', failing)).rejects.toThrow('repository not ready');
    await expect(once.run('a', failing)).rejects.toThrow('repository not ready');
    expect(runs).toBe(2);
  });
});
