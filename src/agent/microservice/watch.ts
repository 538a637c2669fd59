/**
 * Follows one PodVolumeBackup or PodVolumeRestore from inside its data-mover pod: waits until the node-agent sets
 * it InProgress and reports a cancel request once (spec.cancel true while InProgress or Canceling).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import type { CustomClient } from '../../kube/custom.js';
import { watchResource, type ResourceWatch } from '../../kube/informer.js';
import { pollUntil } from '../../kube/wait.js';

export interface DataPathResource extends KubernetesObject {
  spec: { cancel?: boolean | undefined };
  status?: { phase?: string | undefined } | undefined;
}

export interface TaskWatch<T extends DataPathResource> {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The object as last seen (undefined before start or once deleted). */
  current(): T | undefined;
  waitUntilInProgress(opts: { timeoutMs: number; signal: AbortSignal }): Promise<T>;
  onCancelRequested(listener: () => void): () => void;
}

/** Cancel is acted on once the data path may be running: spec.cancel while InProgress (or already Canceling). */
export function isCancelRequested(obj: DataPathResource | undefined): boolean {
  return obj?.spec.cancel === true && (obj.status?.phase === 'InProgress' || obj.status?.phase === 'Canceling');
}

export function watchTask<T extends DataPathResource>(opts: { kube: Kube; client: CustomClient<T>; namespace: string; name: string; kindLabel: string; logger: Logger }): TaskWatch<T> {
  const listeners = new Set<() => void>();
  let cancelSeen = false;
  const notifyIfCanceled = (obj: T | undefined) => {
    if (cancelSeen || !isCancelRequested(obj)) return;
    cancelSeen = true;
    for (const l of listeners) l();
  };
  const watch: ResourceWatch<T> = watchResource<T>({
    kube: opts.kube,
    path: opts.client.path(opts.namespace),
    list: () => opts.client.listForWatch(opts.namespace),
    logger: opts.logger,
    onEvent: (_type, obj) => {
      if (obj.metadata?.name === opts.name) notifyIfCanceled(obj);
    },
  });
  const current = () => watch.get(opts.name, opts.namespace);
  return {
    start: () => watch.start(),
    stop: () => watch.stop(),
    current,
    async waitUntilInProgress({ timeoutMs, signal }) {
      const found = await pollUntil<T>(
        async () => {
          const obj = current();
          if (!obj) return { done: false, state: 'not found' };
          const phase = obj.status?.phase ?? 'New';
          if (phase === 'InProgress') return { done: true, value: obj };
          if (['Completed', 'Failed', 'Canceled', 'Canceling'].includes(phase)) throw new Error(`${opts.kindLabel} ${opts.name} is ${phase}, not InProgress`);
          return { done: false, state: `phase ${phase}` };
        },
        { what: `${opts.kindLabel} ${opts.name} to be InProgress`, timeoutMs, intervalMs: 500, signal },
      );
      if (!found) throw new Error(`${opts.kindLabel} ${opts.name} not found`);
      notifyIfCanceled(found);
      return found;
    },
    onCancelRequested(listener) {
      listeners.add(listener);
      if (cancelSeen) listener();
      else notifyIfCanceled(current());
      return () => listeners.delete(listener);
    },
  };
}
