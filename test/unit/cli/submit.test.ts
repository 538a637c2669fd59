/** `backup create` / `restore create` after the object is built: create, say so, follow with --wait. */
import { describe, expect, it } from 'vitest';
import { CairnError, UsageError } from '../../../src/base/errors.js';
import { followState, submitAndFollow, type SubmitOptions } from '../../../src/cli/submit.js';
import type { FollowState } from '../../../src/cli/wait.js';

function options(over: Partial<SubmitOptions> = {}): { opts: SubmitOptions; lines: string[] } {
  const lines: string[] = [];
  const opts: SubmitOptions = {
    kind: 'backup',
    name: 'shop',
    namespace: 'velero',
    create: async () => undefined,
    wait: false,
    isDone: (phase) => phase === 'Completed' || phase === 'Failed',
    read: async () => ({ phase: 'Completed', done: 3, total: 3 }),
    out: (l) => lines.push(l),
    ...over,
  };
  return { opts, lines };
}

describe('submitAndFollow', () => {
  it('creates the object and points at describe and logs when not waiting', async () => {
    let created = 0;
    const { opts, lines } = options({ kind: 'restore', name: 'r1', create: async () => (created += 1) });
    expect(await submitAndFollow(opts)).toBe(0);
    expect(created).toBe(1);
    expect(lines).toEqual(['Restore request "r1" submitted successfully.', 'Run `cairn restore describe r1` or `cairn restore logs r1` for more details.']);
  });

  it('turns a name already taken into a usage error naming the object and namespace', async () => {
    const taken = new CairnError('create failed', { cause: Object.assign(new Error('conflict'), { code: 409 }) });
    const { opts, lines } = options({ create: () => Promise.reject(taken) });
    const err = await submitAndFollow(opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain('backup "shop" already exists in namespace "velero"');
    expect(lines).toEqual([]);
  });

  it('passes other create errors on unchanged', async () => {
    const boom = new Error('API server unreachable');
    const { opts } = options({ create: () => Promise.reject(boom) });
    await expect(submitAndFollow(opts)).rejects.toBe(boom);
  });

  it('with wait, follows the object to its end; the exit code says how it ended', async () => {
    const states: FollowState[] = [{ phase: 'InProgress', done: 1, total: 3 }, { phase: 'Failed', done: 2, total: 3, failureReason: 'disk full' }];
    const { opts, lines } = options({ wait: true, read: async () => (states.length > 1 ? states.shift() : states[0]) });
    const code = await submitAndFollow(opts);
    expect(code).not.toBe(0);
    expect(lines[0]).toBe('Backup request "shop" submitted successfully.');
    expect(lines.some((l) => l.startsWith('Waiting for backup to complete.'))).toBe(true);
  });
});

describe('followState', () => {
  it('reads phase, items and failure of a status, New when it has none yet', () => {
    expect(followState({}, undefined)).toEqual({ phase: 'New', done: 0, total: 0, validationErrors: undefined, failureReason: undefined });
    expect(followState({ phase: 'Failed', progress: { totalItems: 9 }, validationErrors: null, failureReason: 'x' }, 4)).toEqual({ phase: 'Failed', done: 4, total: 9, validationErrors: undefined, failureReason: 'x' });
  });
});
