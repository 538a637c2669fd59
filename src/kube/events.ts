/**
 * Records core/v1 Events about an object, as controllers and the in-pod data mover report progress.
 * Messages are built by callers from typed results; never pass raw errors that might carry credentials.
 */
import { randomBytes } from 'node:crypto';
import type { CoreV1Event, KubernetesObject } from '@kubernetes/client-node';
import type { Kube } from './client.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  event(obj: KubernetesObject, type: EventType, reason: string, message: string): Promise<void>;
}

/** Longer messages are cut: the API server refuses an Event message above 1 KiB. */
export const EVENT_MESSAGE_MAX = 1024;

/** A new Event about `obj` (a fresh name; count 1; first and last seen `now`). */
export function newEvent(obj: KubernetesObject, e: { type: EventType; reason: string; message: string; component: string; host?: string | undefined; now: Date }): CoreV1Event {
  const ns = obj.metadata?.namespace ?? 'default';
  return {
    metadata: { name: `${obj.metadata?.name ?? 'object'}.${randomBytes(8).toString('hex')}`, namespace: ns },
    involvedObject: {
      apiVersion: obj.apiVersion ?? '',
      kind: obj.kind ?? '',
      name: obj.metadata?.name ?? '',
      namespace: ns,
      uid: obj.metadata?.uid ?? '',
      resourceVersion: obj.metadata?.resourceVersion ?? '',
    },
    reason: e.reason,
    message: e.message.slice(0, EVENT_MESSAGE_MAX),
    type: e.type,
    source: { component: e.component, ...(e.host ? { host: e.host } : {}) },
    firstTimestamp: e.now,
    lastTimestamp: e.now,
    count: 1,
    reportingComponent: e.component,
    reportingInstance: e.host ?? '',
  };
}

/** `now` is the clock Event times are read from (tests pass a fixed one). */
export function eventRecorder(kube: Kube, opts: { component: string; host?: string; now?: () => Date }): EventRecorder {
  const { now = () => new Date(), ...source } = opts;
  return {
    async event(obj, type, reason, message) {
      const body = newEvent(obj, { type, reason, message, ...source, now: now() });
      await kube.core.createNamespacedEvent({ namespace: body.metadata?.namespace ?? 'default', body });
    },
  };
}
