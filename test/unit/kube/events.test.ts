/** The Events cairn records: who they are about, their source, and messages cut to what the API server takes. */
import { describe, expect, it } from 'vitest';
import { EVENT_MESSAGE_MAX, newEvent } from '../../../src/kube/events.js';

describe('a new Event', () => {
  const pvb = { apiVersion: 'velero.io/v1', kind: 'PodVolumeBackup', metadata: { name: 'pvb-1', namespace: 'velero', uid: 'u1', resourceVersion: '7' } };
  const now = new Date('2026-01-01T00:00:00Z');

  it('names the object it is about and the component and host that saw it', () => {
    const e = newEvent(pvb, { type: 'Normal', reason: 'Progress', message: 'half way', component: 'node-agent', host: 'node-a', now });
    expect(e.metadata?.name).toMatch(/^pvb-1\.[0-9a-f]{16}$/);
    expect(e).toMatchObject({
      metadata: { namespace: 'velero' },
      involvedObject: { apiVersion: 'velero.io/v1', kind: 'PodVolumeBackup', name: 'pvb-1', namespace: 'velero', uid: 'u1', resourceVersion: '7' },
      reason: 'Progress',
      message: 'half way',
      type: 'Normal',
      source: { component: 'node-agent', host: 'node-a' },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: 'node-agent',
      reportingInstance: 'node-a',
    });
  });

  it('cuts a long message, has no host when none is given, and lands in default for a cluster-scoped object', () => {
    const e = newEvent({ kind: 'Node', metadata: { name: 'n1' } }, { type: 'Warning', reason: 'Failed', message: 'x'.repeat(5000), component: 'server', now });
    expect(e.message).toHaveLength(EVENT_MESSAGE_MAX);
    expect(e.source).toEqual({ component: 'server' });
    expect(e.metadata?.namespace).toBe('default');
    expect(e.reportingInstance).toBe('');
  });
});
