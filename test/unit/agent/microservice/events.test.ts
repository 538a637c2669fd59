/** The data mover's Events: one per reason and object, updated in place (count, message, time) rather than repeated. */
import type { CoreV1Event } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { dataPathEventRecorder } from '../../../../src/agent/microservice/events.js';
import { EventReasons } from '../../../../src/agent/microservice/protocol.js';
import type { Kube } from '../../../../src/kube/client.js';

/** Just the two Event calls the recorder makes; `failReplace` makes updates fail as for an expired Event. */
function eventsApi(opts: { failReplace?: boolean } = {}) {
  const created: CoreV1Event[] = [];
  const replaced: CoreV1Event[] = [];
  const core = {
    createNamespacedEvent: ({ body }: { namespace: string; body: CoreV1Event }) => {
      created.push(body);
      return Promise.resolve(body);
    },
    replaceNamespacedEvent: ({ body }: { name: string; namespace: string; body: CoreV1Event }) => {
      if (opts.failReplace) return Promise.reject(new Error('NotFound'));
      replaced.push(body);
      return Promise.resolve(body);
    },
  };
  return { kube: { core } as unknown as Kube, created, replaced };
}

const pvb = { apiVersion: 'velero.io/v1', kind: 'PodVolumeBackup', metadata: { name: 'pvb-1', namespace: 'velero', uid: 'u1' } };

describe('the data mover event recorder', () => {
  it('creates an Event the first time and updates it for the same reason, with times from its clock', async () => {
    const times = [new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:10Z')];
    const api = eventsApi();
    const recorder = dataPathEventRecorder(api.kube, { component: 'data-mover', now: () => times.shift()! });
    await recorder.record(pvb, EventReasons.Progress, '10%');
    await recorder.record(pvb, EventReasons.Progress, '50%');
    expect(api.created).toHaveLength(1);
    expect(api.created[0]).toMatchObject({ reason: EventReasons.Progress, message: '10%', count: 1, firstTimestamp: new Date('2026-01-01T00:00:00Z') });
    expect(api.replaced).toEqual([expect.objectContaining({ message: '50%', count: 2, lastTimestamp: new Date('2026-01-01T00:00:10Z') })]);
  });

  it('keeps one Event per reason', async () => {
    const api = eventsApi();
    const recorder = dataPathEventRecorder(api.kube, { component: 'data-mover', now: () => new Date(0) });
    await recorder.record(pvb, EventReasons.Progress, '10%');
    await recorder.record(pvb, EventReasons.Completed, 'done');
    expect(api.created.map((e) => e.reason)).toEqual([EventReasons.Progress, EventReasons.Completed]);
  });

  it('creates a new Event when the update fails (the old one expired)', async () => {
    const api = eventsApi({ failReplace: true });
    const recorder = dataPathEventRecorder(api.kube, { component: 'data-mover', now: () => new Date(0) });
    await recorder.record(pvb, EventReasons.Progress, '10%');
    await recorder.record(pvb, EventReasons.Progress, '50%');
    expect(api.created.map((e) => e.message)).toEqual(['10%', '50%']);
  });
});
