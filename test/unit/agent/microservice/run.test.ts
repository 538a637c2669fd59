import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/base/logger.js';
import { runDataPath, type DataPathWork } from '../../../../src/agent/microservice/run.js';
import { backupResultMessage, progressMessage, restoreResultMessage } from '../../../../src/agent/microservice/protocol.js';

const logger = createLogger({ level: 'fatal' });

function harness(opts: { work?: DataPathWork; prepareError?: Error; waitError?: Error; progressIntervalMs?: number; clock?: () => number; stop?: AbortSignal } = {}) {
  const events: { reason: string; message: string }[] = [];
  let cancel: (() => void) | undefined;
  const run = runDataPath({
    kind: 'PVB',
    name: 'pvb-1',
    logger,
    events: { emit: async (reason, message) => void events.push({ reason, message }) },
    waitUntilInProgress: async () => {
      if (opts.waitError) throw opts.waitError;
    },
    onCancelRequested: (l) => {
      cancel = l;
      return () => (cancel = undefined);
    },
    prepare: async () => {
      if (opts.prepareError) throw opts.prepareError;
      return opts.work ?? { run: async () => '{}' };
    },
    progressIntervalMs: opts.progressIntervalMs ?? 0,
    ...(opts.clock ? { now: opts.clock } : {}),
    stop: opts.stop,
  });
  return { run, events, requestCancel: () => cancel?.() };
}

describe('the data mover protocol', () => {
  it('reports Started, Progress, Completed with the result JSON, then Stopped; the result is the termination message', async () => {
    const result = backupResultMessage({ snapshotID: 'abc123', emptySnapshot: false, volumePath: '/uid-1', totalBytes: 42 });
    const h = harness({
      work: {
        run: async ({ onProgress }) => {
          onProgress({ totalBytes: 42, doneBytes: 10 });
          return result;
        },
      },
    });
    const out = await h.run;
    expect(out).toEqual({ outcome: 'completed', terminationMessage: result });
    expect(h.events).toEqual([
      { reason: 'Data-Path-Started', message: 'Data path for pvb-1 started' },
      { reason: 'Data-Path-Progress', message: '{"totalBytes":42,"doneBytes":10}' },
      { reason: 'Data-Path-Completed', message: result },
      { reason: 'Data-Path-Stopped', message: 'Data path for pvb-1 stopped' },
    ]);
    expect(JSON.parse(result)).toEqual({ snapshotID: 'abc123', emptySnapshot: false, source: { byPath: '/uid-1', volumeMode: 'Filesystem' }, totalBytes: 42 });
  });

  it('throttles progress events', async () => {
    let t = 0;
    const h = harness({
      progressIntervalMs: 10_000,
      clock: () => t,
      work: {
        run: async ({ onProgress }) => {
          for (let i = 1; i <= 5; i++) {
            t = i * 3_000; // 3 s apart: only every fourth tick passes a 10 s throttle
            onProgress({ totalBytes: 100, doneBytes: i });
          }
          return '{}';
        },
      },
    });
    await h.run;
    expect(h.events.filter((e) => e.reason === 'Data-Path-Progress').map((e) => e.message)).toEqual(['{"totalBytes":100,"doneBytes":1}', '{"totalBytes":100,"doneBytes":5}']);
  });

  it('the final progress (done = total) is never throttled away, and sent once', async () => {
    const h = harness({
      progressIntervalMs: 10_000,
      clock: () => 0,
      work: {
        run: async ({ onProgress }) => {
          onProgress({ totalBytes: 100, doneBytes: 40 });
          onProgress({ totalBytes: 100, doneBytes: 100 });
          onProgress({ totalBytes: 100, doneBytes: 100 });
          return '{}';
        },
      },
    });
    await h.run;
    expect(h.events.filter((e) => e.reason === 'Data-Path-Progress').map((e) => e.message)).toEqual(['{"totalBytes":100,"doneBytes":40}', '{"totalBytes":100,"doneBytes":100}']);
  });

  it('a failure reports Data-Path-Failed with Velero\'s message and ends with a failure termination message', async () => {
    const h = harness({ work: { run: async () => Promise.reject(new Error('store unreachable\n after retries')) } });
    const out = await h.run;
    expect(out.outcome).toBe('failed');
    expect(out.terminationMessage).toBe('Failed to run data path service for PVB pvb-1: store unreachable after retries');
    expect(h.events.map((e) => e.reason)).toEqual(['Data-Path-Started', 'Data-Path-Failed', 'Data-Path-Stopped']);
    expect(h.events[1]!.message).toBe('Data path for PVB pvb-1 failed, error store unreachable after retries');
  });

  it('a cancel request aborts the work: Canceling, Canceled, Stopped; the termination message ends with "data path is canceled"', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const h = harness({
      work: {
        run: ({ signal }) =>
          new Promise<string>((_resolve, reject) => {
            started();
            signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true });
          }),
      },
    });
    await running;
    h.requestCancel();
    const out = await h.run;
    expect(out.outcome).toBe('canceled');
    expect(out.terminationMessage.endsWith('data path is canceled')).toBe(true);
    expect(h.events).toEqual([
      { reason: 'Data-Path-Started', message: 'Data path for pvb-1 started' },
      { reason: 'Data-Path-Canceling', message: 'Canceling for PVB pvb-1' },
      { reason: 'Data-Path-Canceled', message: 'Data path for PVB pvb-1 canceled' },
      { reason: 'Data-Path-Stopped', message: 'Data path for pvb-1 stopped' },
    ]);
  });

  it('a stop (SIGTERM) aborts the work like a cancel, lets it clean up, and ends Failed saying why', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let cleanedUp = false;
    const stop = new AbortController();
    const h = harness({
      stop: stop.signal,
      work: {
        run: ({ signal }) =>
          new Promise<string>((_resolve, reject) => {
            started();
            signal.addEventListener('abort', () => {
              cleanedUp = true; // the data path's finally: the repository lock released
              reject(new Error('cancelled'));
            }, { once: true });
          }),
      },
    });
    await running;
    stop.abort(new Error('the data mover was stopped (SIGTERM) before it finished'));
    const out = await h.run;
    expect(cleanedUp).toBe(true);
    expect(out).toEqual({ outcome: 'failed', terminationMessage: 'Failed to run data path service for PVB pvb-1: the data mover was stopped (SIGTERM) before it finished' });
    expect(h.events.map((e) => e.reason)).toEqual(['Data-Path-Started', 'Data-Path-Failed', 'Data-Path-Stopped']);
  });

  it('a repository that cannot be opened is an init failure, and nothing is started', async () => {
    const h = harness({ prepareError: new Error('no repository for volume namespace "ns1"') });
    const out = await h.run;
    expect(out).toEqual({ outcome: 'failed', terminationMessage: 'Failed to init data path service for PVB pvb-1: no repository for volume namespace "ns1"' });
    expect(h.events.map((e) => e.reason)).toEqual(['Data-Path-Failed', 'Data-Path-Stopped']);
  });

  it('never reaching InProgress fails without events', async () => {
    const h = harness({ waitError: new Error('timed out after 10s waiting for PVB pvb-1 to be InProgress') });
    const out = await h.run;
    expect(out.outcome).toBe('failed');
    expect(out.terminationMessage).toContain('timed out');
    expect(h.events).toEqual([]);
  });

  it('formats progress and restore results as Velero does (omitempty, doneBytes)', () => {
    expect(progressMessage({ totalBytes: 0, doneBytes: 0 })).toBe('{}');
    expect(progressMessage({ totalBytes: 5, doneBytes: 0 })).toBe('{"totalBytes":5}');
    expect(JSON.parse(restoreResultMessage({ volumePath: '/u', totalBytes: 7 }))).toEqual({ target: { byPath: '/u', volumeMode: 'Filesystem' }, totalBytes: 7 });
  });
});
