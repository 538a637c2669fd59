/**
 * Events on the PVB/PVR, recorded the way Velero's data mover records them (docs/microservice.md): a reason
 * seen before on the same object updates that Event (message, count, lastTimestamp) instead of creating another,
 * so a long backup leaves one Progress Event that moves rather than thousands. Watchers therefore follow Event
 * updates as well as creations. If an update fails (the Event expired), a new Event is created.
 */
import type { CoreV1Event, KubernetesObject } from '@kubernetes/client-node';
import type { Kube } from '../../kube/client.js';
import { EVENT_MESSAGE_MAX, newEvent } from '../../kube/events.js';
import type { EventReason } from './protocol.js';

export interface DataPathEventRecorder {
  record(obj: KubernetesObject, reason: EventReason, message: string): Promise<void>;
}

/** `now` is the clock Event times are read from (tests pass a fixed one). */
export function dataPathEventRecorder(kube: Kube, opts: { component: string; host?: string | undefined; now?: () => Date }): DataPathEventRecorder {
  const now = opts.now ?? (() => new Date());
  const previous = new Map<string, CoreV1Event>();
  const create = async (obj: KubernetesObject, reason: string, message: string): Promise<CoreV1Event> => {
    const body = newEvent(obj, { type: 'Normal', reason, message, component: opts.component, host: opts.host, now: now() });
    return kube.core.createNamespacedEvent({ namespace: body.metadata?.namespace ?? 'default', body });
  };
  return {
    async record(obj, reason, rawMessage) {
      const message = rawMessage.slice(0, EVENT_MESSAGE_MAX);
      const key = `${obj.metadata?.uid ?? obj.metadata?.name ?? ''}/${reason}`;
      const before = previous.get(key);
      if (before?.metadata?.name) {
        try {
          const updated = await kube.core.replaceNamespacedEvent({
            name: before.metadata.name,
            namespace: before.metadata.namespace ?? obj.metadata?.namespace ?? 'default',
            body: { ...before, message, count: (before.count ?? 1) + 1, lastTimestamp: now() },
          });
          previous.set(key, updated);
          return;
        } catch {
          // Expired or replaced by someone else: start a new Event below.
        }
      }
      previous.set(key, await create(obj, reason, message));
    },
  };
}
