import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { beginMarker, endMarker, mergeLog } from '../../../src/agent/watcher/log-merge.js';
import { MicroServiceWatch, NOT_STARTED_EVENT_WAIT_MS, byResourceVersion, type WatchOutcome, type WatchProgress } from '../../../src/agent/watcher/microservice-watch.js';
import { NodeSlots } from '../../../src/agent/slots.js';

const CONTAINER = 'pvb-uid';

function event(uid: string, rv: number, reason: string, message: string): CoreV1Event {
  return { metadata: { uid, resourceVersion: String(rv), name: `e-${uid}` }, involvedObject: { kind: 'PodVolumeBackup', name: 'b1' }, reason, message };
}

function pod(phase: string, message?: string, exitCode = phase === 'Succeeded' ? 0 : 1): V1Pod {
  return {
    metadata: { name: 'b1' },
    status: {
      phase,
      containerStatuses: [{ name: CONTAINER, image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode, ...(message !== undefined ? { message } : {}) } } }],
    },
  };
}

const result = (snapshotID: string, totalBytes = 100) => JSON.stringify({ snapshotID, emptySnapshot: false, source: { byPath: '/pvb-uid', volumeMode: 'Filesystem' }, totalBytes });

/** A watch with a fake timer: timers fire only when the test says so. */
function harness() {
  const progress: WatchProgress[] = [];
  const ends: WatchOutcome[] = [];
  const timers: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  const watch = new MicroServiceWatch({
    podRef: 'velero/b1',
    container: CONTAINER,
    eventWaitMs: 60_000,
    onProgress: (p) => progress.push(p),
    onEnd: (o) => ends.push(o),
    setTimer: (fn, ms) => {
      const t = { fn, ms, cancelled: false };
      timers.push(t);
      return { cancel: () => (t.cancelled = true) };
    },
  });
  const fire = () => timers.filter((t) => !t.cancelled).forEach((t) => t.fn());
  return { watch, progress, ends, timers, fire };
}

describe('micro-service watcher', () => {
  it('reports progress from Event creates and updates, once per resourceVersion, dropping stale updates', () => {
    const h = harness();
    h.watch.onEvent(event('p', 5, 'Data-Path-Progress', '{"totalBytes":100,"doneBytes":10}'));
    h.watch.onEvent(event('p', 5, 'Data-Path-Progress', '{"totalBytes":100,"doneBytes":10}'));
    h.watch.onEvent(event('p', 7, 'Data-Path-Progress', '{"totalBytes":100,"doneBytes":50}'));
    h.watch.onEvent(event('p', 6, 'Data-Path-Progress', '{"totalBytes":100,"doneBytes":30}'));
    h.watch.onEvent(event('q', 8, 'Data-Path-Progress', '{}'));
    expect(h.progress).toEqual([
      { totalBytes: 100, bytesDone: 10 },
      { totalBytes: 100, bytesDone: 50 },
      { totalBytes: 0, bytesDone: 0 },
    ]);
    expect(byResourceVersion([event('a', 12, 'x', ''), event('b', 3, 'x', ''), event('c', 100, 'x', '')]).map((e) => e.metadata?.uid)).toEqual(['b', 'a', 'c']);
  });

  it('completes from the termination message once Stopped is seen, with a final full progress', () => {
    const h = harness();
    h.watch.onEvent(event('s', 1, 'Data-Path-Started', 'Data path for b1 started'));
    h.watch.onPod(pod('Running'));
    h.watch.onPod(pod('Succeeded', result('abc')));
    expect(h.ends).toEqual([]); // waits for the last events
    h.watch.onEvent(event('c', 2, 'Data-Path-Completed', result('abc')));
    h.watch.onEvent(event('t', 3, 'Data-Path-Stopped', 'Data path for b1 stopped'));
    expect(h.ends).toEqual([{ outcome: 'completed', result: JSON.parse(result('abc')) }]);
    expect(h.progress.at(-1)).toEqual({ totalBytes: 100, bytesDone: 100 });
    expect(h.timers[0]?.cancelled).toBe(true);
  });

  it('fails when the Completed event and the termination message disagree', () => {
    const h = harness();
    h.watch.onEvent(event('s', 1, 'Data-Path-Started', ''));
    h.watch.onEvent(event('c', 2, 'Data-Path-Completed', result('abc')));
    h.watch.onEvent(event('t', 3, 'Data-Path-Stopped', ''));
    h.watch.onPod(pod('Succeeded', result('xyz')));
    expect(h.ends).toEqual([{ outcome: 'failed', message: 'data-mover results disagree: Completed event has snapshot abc, termination message xyz' }]);
  });

  it('a failed pod is canceled when its message ends with "data path is canceled", else failed with the message', () => {
    const canceled = harness();
    canceled.watch.onEvent(event('t', 3, 'Data-Path-Stopped', ''));
    canceled.watch.onPod(pod('Failed', 'Failed to run data path service for PVB b1: data path is canceled'));
    expect(canceled.ends).toEqual([{ outcome: 'canceled', message: 'Failed to run data path service for PVB b1: data path is canceled' }]);

    const failed = harness();
    failed.watch.onEvent(event('t', 3, 'Data-Path-Stopped', ''));
    failed.watch.onPod(pod('Failed', 'Failed to init data path service for PVB b1: no repository'));
    expect(failed.ends).toEqual([{ outcome: 'failed', message: 'Failed to init data path service for PVB b1: no repository' }]);

    const crashed = harness();
    crashed.watch.onEvent(event('t', 3, 'Data-Path-Stopped', ''));
    crashed.watch.onPod(pod('Failed', undefined, 137));
    expect(crashed.ends).toEqual([{ outcome: 'failed', message: 'data-mover pod velero/b1 ended with exit code 137' }]);
  });

  it('after the pod ends, waits a bounded time for Stopped: the full wait once started, a short one otherwise', () => {
    const started = harness();
    started.watch.onEvent(event('s', 1, 'Data-Path-Started', ''));
    started.watch.onPod(pod('Failed', 'boom'));
    expect(started.ends).toEqual([]);
    expect(started.timers.map((t) => t.ms)).toEqual([60_000]);
    started.fire();
    expect(started.ends).toEqual([{ outcome: 'failed', message: 'boom' }]);

    const never = harness();
    never.watch.onPod(pod('Failed', 'x: data path is canceled'));
    expect(never.timers.map((t) => t.ms)).toEqual([NOT_STARTED_EVENT_WAIT_MS]);
    never.fire();
    expect(never.ends).toEqual([{ outcome: 'canceled', message: 'x: data path is canceled' }]);
  });

  it('a deleted pod fails the work at once, naming the pod, unless the data path had reported its whole end', () => {
    const killed = harness();
    killed.watch.onEvent(event('s', 1, 'Data-Path-Started', ''));
    killed.watch.onPod(undefined);
    expect(killed.ends).toEqual([{ outcome: 'failed', message: 'data-mover pod velero/b1 was deleted or killed before the data path finished' }]);

    const finished = harness();
    finished.watch.onEvent(event('c', 2, 'Data-Path-Completed', result('abc')));
    finished.watch.onEvent(event('t', 3, 'Data-Path-Stopped', ''));
    finished.watch.onPod(undefined);
    expect(finished.ends).toEqual([{ outcome: 'completed', result: JSON.parse(result('abc')) }]);
  });

  it('reports one outcome only, and nothing after close', () => {
    const h = harness();
    h.watch.onPod(undefined);
    h.watch.onPod(undefined);
    h.watch.onEvent(event('t', 3, 'Data-Path-Stopped', ''));
    expect(h.ends).toHaveLength(1);
    const closed = harness();
    closed.watch.close();
    closed.watch.onPod(undefined);
    expect(closed.ends).toEqual([]);
  });
});

describe('data-mover log merging', () => {
  it('writes the pod log between begin/end markers, each line with log-source, JSON lines field by field', () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (c: Buffer, _e, done) => (lines.push(...c.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)), done()) });
    const logger = pino({ level: 'info' }, sink);
    const log = [
      JSON.stringify({ level: 30, time: 1_700_000_000_000, component: 'data-mover', PVB: 'b1', snapshotID: 'abc', msg: 'snapshot written' }),
      JSON.stringify({ level: 40, time: 1_700_000_000_001, msg: 'not backed up: permission denied', path: '/x' }),
      'plain text line',
      '',
    ].join('\n');
    mergeLog(logger, 'b1/pvb-uid', log);
    expect(lines.map((l) => l.msg)).toEqual([beginMarker('b1/pvb-uid'), 'snapshot written', 'not backed up: permission denied', 'plain text line', endMarker('b1/pvb-uid')]);
    expect(lines.every((l) => l['log-source'] === 'b1/pvb-uid')).toBe(true);
    expect(lines[1]).toMatchObject({ level: 30, PVB: 'b1', snapshotID: 'abc', sourceTime: '2023-11-14T22:13:20.000Z' });
    expect(lines[1]?.component).toBeUndefined();
    expect(lines[2]).toMatchObject({ level: 40, path: '/x' });
    expect(beginMarker('p/c')).toBe('***************************begin pod logs[p/c]***************************');
  });
});

describe('node slots', () => {
  it('never hands out more slots than the limit; releasing wakes waiting work', () => {
    const slots = new NodeSlots(1);
    let woken = 0;
    slots.onFree(() => woken++);
    expect(slots.tryAcquire('PVB/a')).toBe(true);
    expect(slots.tryAcquire('PVB/a')).toBe(true);
    expect(slots.tryAcquire('PVR/b')).toBe(false);
    slots.release('PVR/b');
    expect(woken).toBe(0);
    slots.release('PVB/a');
    expect(woken).toBe(1);
    expect(slots.tryAcquire('PVR/b')).toBe(true);
    slots.hold('PVB/resumed');
    expect(slots.inUse).toBe(2);
  });
});
