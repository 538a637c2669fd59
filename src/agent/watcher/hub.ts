/**
 * One watch, many listeners: the node-agent keeps a single watch on the Events and one on the pods of its namespace
 * and hands each object to the listeners registered for its key (the PVB/PVR an Event is about, a pod's name), so
 * a hundred running data movers cost two watches, not two hundred.
 */
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { watchResource, type ResourceWatch, type WatchEventType } from '../../kube/informer.js';

export type HubListener<T> = (type: WatchEventType, obj: T) => void;

export interface Hub<T extends KubernetesObject> {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Registers a listener; returns the unsubscribe function. */
  subscribe(key: string, listener: HubListener<T>): () => void;
  /** Cached objects with this key. */
  cached(key: string): T[];
  all(): T[];
}

export function createHub<T extends KubernetesObject>(opts: {
  kube: Kube;
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  keyOf: (obj: T) => string | undefined;
  labelSelector?: string;
  fieldSelector?: string;
  logger?: Logger;
  /** Called for every object after the keyed listeners. */
  onAny?: HubListener<T>;
}): Hub<T> {
  const listeners = new Map<string, Set<HubListener<T>>>();
  const watch: ResourceWatch<T> = watchResource<T>({
    kube: opts.kube,
    path: opts.path,
    list: opts.list,
    ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
    ...(opts.fieldSelector ? { fieldSelector: opts.fieldSelector } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
    onEvent: (type, obj) => {
      const key = opts.keyOf(obj);
      if (key !== undefined) {
        for (const l of [...(listeners.get(key) ?? [])]) {
          try {
            l(type, obj);
          } catch (err) {
            opts.logger?.warn({ key, err: (err as Error).message }, 'watch listener failed');
          }
        }
      }
      opts.onAny?.(type, obj);
    },
  });
  return {
    start: () => watch.start(),
    stop: () => watch.stop(),
    subscribe(key, listener) {
      let set = listeners.get(key);
      if (!set) listeners.set(key, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(key);
      };
    },
    cached: (key) => watch.list().filter((o) => opts.keyOf(o) === key),
    all: () => watch.list(),
  };
}
