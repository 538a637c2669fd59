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

export function eventRecorder(kube: Kube, opts: { component: string; host?: string }): EventRecorder {
  return {
    async event(obj, type, reason, message) {
      const ns = obj.metadata?.namespace ?? 'default';
      const now = new Date();
      const body: CoreV1Event = {
        metadata: { name: `${obj.metadata?.name ?? 'object'}.${randomBytes(8).toString('hex')}`, namespace: ns },
        involvedObject: {
          apiVersion: obj.apiVersion ?? '',
          kind: obj.kind ?? '',
          name: obj.metadata?.name ?? '',
          namespace: ns,
          uid: obj.metadata?.uid ?? '',
          resourceVersion: obj.metadata?.resourceVersion ?? '',
        },
        reason,
        message: message.slice(0, 1024),
        type,
        source: { component: opts.component, ...(opts.host ? { host: opts.host } : {}) },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        reportingComponent: opts.component,
        reportingInstance: opts.host ?? '',
      };
      await kube.core.createNamespacedEvent({ namespace: ns, body });
    },
  };
}
