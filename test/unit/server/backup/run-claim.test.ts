import { describe, expect, it } from 'vitest';
import { HEARTBEAT_ANNOTATION, RUNNER_ANNOTATION, STALE_AFTER_MS, claimAnnotations, claimState, releaseClaim } from '../../../../src/server/backup/run-claim.js';

const now = Date.parse('2026-01-01T10:00:00Z');
const beat = (agoMs: number, runner = 'pod-a/1') => ({ [RUNNER_ANNOTATION]: runner, [HEARTBEAT_ANNOTATION]: new Date(now - agoMs).toISOString() });

describe('who runs a backup', () => {
  it('is free when nobody claimed it, when it is mine, or when the heartbeat is stale', () => {
    expect(claimState(undefined, 'pod-b/1', now)).toEqual({ free: true });
    expect(claimState(beat(1000, 'pod-b/1'), 'pod-b/1', now)).toEqual({ free: true });
    expect(claimState(beat(STALE_AFTER_MS), 'pod-b/1', now)).toEqual({ free: true });
    expect(claimState({ [RUNNER_ANNOTATION]: 'pod-a/1', [HEARTBEAT_ANNOTATION]: 'garbage' }, 'pod-b/1', now)).toEqual({ free: true });
  });

  it('is held by another live process, with the time until its heartbeat goes stale', () => {
    expect(claimState(beat(5000), 'pod-b/1', now)).toEqual({ free: false, runner: 'pod-a/1', retryInMs: STALE_AFTER_MS - 5000 + 1000 });
  });

  it('writes and releases the annotations', () => {
    const a: Record<string, string> = { keep: 'me', ...claimAnnotations('pod-a/1', new Date(now)) };
    expect(a[HEARTBEAT_ANNOTATION]).toBe('2026-01-01T10:00:00.000Z');
    releaseClaim(a);
    expect(a).toEqual({ keep: 'me' });
  });
});
