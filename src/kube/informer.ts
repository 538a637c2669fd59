/**
 * The one wrapper around client-node's informer. client-node relists on 410 by itself but stops for good on any
 * other error; here every error restarts the watch after exponential back-off with jitter, and `synced` resolves
 * once the first list has been delivered, so controllers start from observed state.
 */
import { ListWatch, Watch, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { backoffMs } from '../base/backoff.js';
import { keepAliveTimerClock, type TimerClock } from '../base/clock.js';
import type { Logger } from '../base/logger.js';
import type { Kube } from './client.js';

export type WatchEventType = 'add' | 'update' | 'delete';

export interface ResourceWatchOptions<T extends KubernetesObject> {
  kube: Kube;
  /** API path of the collection, e.g. /apis/velero.io/v1/namespaces/velero/backups. */
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  /** Field selector for the watch (e.g. `spec.nodeName=<node>`); the list function must apply the same one. */
  fieldSelector?: string;
  onEvent: (type: WatchEventType, obj: T) => void;
  logger?: Logger;
  maxBackoffMs?: number;
  /** The restart timer's clock and the jitter's randomness (tests inject both). */
  clock?: TimerClock;
  random?: () => number;
}

export interface ResourceWatch<T extends KubernetesObject> {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The cached objects as last observed. */
  list(): T[];
  get(name: string, namespace?: string): T | undefined;
}

/** A watch that has run this long since its last failure starts its back-off afresh. */
const FAILURES_FORGOTTEN_AFTER_MS = 5 * 60_000;

export function watchResource<T extends KubernetesObject>(opts: ResourceWatchOptions<T>): ResourceWatch<T> {
  const informer = new ListWatch<T>(opts.path, new Watch(opts.kube.config), opts.list, false, opts.labelSelector, opts.fieldSelector);
  let stopped = false;
  let failures = 0;
  let restartTimer: { cancel(): void } | undefined;
  let lastFailureAt = Number.NEGATIVE_INFINITY;
  const clock = opts.clock ?? keepAliveTimerClock;
  let resolveSynced: () => void = () => {};
  const synced = new Promise<void>((r) => (resolveSynced = r));

  informer.on('add', (o) => opts.onEvent('add', o));
  informer.on('update', (o) => opts.onEvent('update', o));
  informer.on('delete', (o) => opts.onEvent('delete', o));
  let errored = false;
  // informer.start() resolves even when its list failed (it reports through 'error'): only a start without an
  // error counts as synced.
  const tryStart = async () => {
    errored = false;
    await informer.start();
    if (!errored) {
      failures = 0;
      resolveSynced();
    }
  };
  informer.on('error', (err) => {
    errored = true;
    if (stopped) return;
    // client-node reports 'connect' before it lists, so a failing list says nothing about the connection: failures
    // count up until a start succeeds, or until a quiet spell shows the last outage is over.
    if (clock.now() - lastFailureAt > FAILURES_FORGOTTEN_AFTER_MS) failures = 0;
    lastFailureAt = clock.now();
    failures++;
    const delay = backoffMs(failures, { baseMs: 500, maxMs: opts.maxBackoffMs ?? 30_000, ...(opts.random ? { random: opts.random } : {}) });
    opts.logger?.warn({ path: opts.path, err: (err as Error)?.message, retryInMs: delay }, 'watch failed; restarting');
    restartTimer = clock.setTimeout(() => {
      if (!stopped) tryStart().catch(() => undefined);
    }, delay);
  });

  return {
    async start() {
      stopped = false;
      // An empty collection produces no 'add': the first successful list resolves `synced` too.
      await tryStart();
      await synced;
    },
    async stop() {
      stopped = true;
      restartTimer?.cancel();
      await informer.stop();
    },
    list: () => [...informer.list()],
    get: (name, namespace) => informer.get(name, namespace),
  };
}
