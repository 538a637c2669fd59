/**
 * A controller = one watch feeding keys (namespace/name) into one WorkQueue whose worker reconciles from
 * observed state. Reconcilers are written as guard clauses and must be idempotent: any key may be reconciled
 * again at any time, including after a restart.
 */
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../base/logger.js';
import type { Kube } from './client.js';
import type { CustomClient } from './custom.js';
import { watchResource, type ResourceWatch, type WatchEventType } from './informer.js';
import type { TimerClock } from '../base/clock.js';
import { WorkQueue } from './queue.js';

export interface ReconcileResult {
  requeueAfterMs?: number;
}

export interface ControllerOptions<T extends KubernetesObject> {
  name: string;
  kube: Kube;
  logger: Logger;
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  reconcile: (key: ObjectKey) => Promise<ReconcileResult | void>;
  concurrency?: number;
  /** Also requeue every object this often (resync), e.g. to expire TTLs. */
  resyncMs?: number;
  /** Time for delayed requeues (`requeueAfterMs`, back-off); tests inject a fake one. Default: real timers. */
  clock?: TimerClock;
  /** Also told of every watch event (metrics count observed changes from it); must not throw. */
  onEvent?: (type: WatchEventType, obj: T) => void;
}

export interface ObjectKey {
  namespace: string;
  name: string;
}

export function keyString(k: ObjectKey): string {
  return `${k.namespace}/${k.name}`;
}

export function parseKey(s: string): ObjectKey {
  const i = s.indexOf('/');
  return { namespace: s.slice(0, i), name: s.slice(i + 1) };
}

export interface RunningController<T extends KubernetesObject> {
  readonly watch: ResourceWatch<T>;
  readonly queue: WorkQueue;
  enqueue(key: ObjectKey): void;
  stop(): Promise<void>;
}

export async function startController<T extends KubernetesObject>(opts: ControllerOptions<T>): Promise<RunningController<T>> {
  const log = opts.logger.child({ controller: opts.name });
  const queue = new WorkQueue({
    concurrency: opts.concurrency ?? 1,
    ...(opts.clock ? { clock: opts.clock } : {}),
    work: (key) => opts.reconcile(parseKey(key)),
    onError: (key, err, attempt) => log.warn({ key, attempt, err: (err as Error)?.message }, 'reconcile failed; will retry'),
  });
  const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  const watch = watchResource<T>({
    kube: opts.kube,
    path: opts.path,
    list: opts.list,
    ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
    logger: log,
    onEvent: (type, obj) => {
      opts.onEvent?.(type, obj);
      queue.add(keyOf(obj));
    },
  });
  await watch.start();
  let resync: NodeJS.Timeout | undefined;
  if (opts.resyncMs) {
    resync = setInterval(() => watch.list().forEach((o) => queue.add(keyOf(o))), opts.resyncMs);
    resync.unref();
  }
  log.debug('controller started');
  return {
    watch,
    queue,
    enqueue: (k) => queue.add(keyString(k)),
    async stop() {
      if (resync) clearInterval(resync);
      queue.stop();
      await watch.stop();
      await queue.idle();
    },
  };
}

/** Where a controller of one custom kind runs: the cluster, its log, and the one namespace it watches. */
export interface ControllerScope {
  kube: Kube;
  logger: Logger;
  namespace: string;
}

/**
 * A controller over one custom kind in the scope's namespace: the watch path and its list come from the kind's
 * client, so a controller names only what is its own (name, reconcile, concurrency, resync).
 */
export function startCustomController<T extends KubernetesObject>(
  scope: ControllerScope,
  client: CustomClient<T>,
  opts: Omit<ControllerOptions<T>, 'kube' | 'logger' | 'path' | 'list'>,
): Promise<RunningController<T>> {
  return startController<T>({
    ...opts,
    kube: scope.kube,
    logger: scope.logger,
    path: client.path(scope.namespace),
    list: () => client.listForWatch(scope.namespace, opts.labelSelector),
  });
}
