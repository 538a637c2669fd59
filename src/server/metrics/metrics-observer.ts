/**
 * Feeds the server's metrics from observed state (docs/metrics.md): watches the install namespace's Backups,
 * Restores, DeleteBackupRequests, storage locations and Schedules, remembers the phase each was last seen in, and
 * applies what ./metrics-decisions.ts says each change means. backup_total and restore_total are counted from the
 * watch caches at scrape time.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  Kinds,
  type Backup,
  type BackupStorageLocation,
  type DeleteBackupRequest,
  type Restore,
  type Schedule,
} from '../../api/index.js';
import type { MetricEffect, MetricsRegistry } from '../../base/metrics.js';
import { customClient, type ResourceKind } from '../../kube/custom.js';
import { watchResource, type ResourceWatch, type WatchEventType } from '../../kube/informer.js';
import type { ServerContext, Stoppable } from '../context.js';
import { ServerMetric } from './definitions.js';
import {
  backupSchedule,
  backupTransitionEffects,
  deleteRequestTransitionEffects,
  gaugesAtStart,
  locationEffects,
  restoreTransitionEffects,
  scheduleInitEffects,
  scheduleRemoveEffects,
} from './metrics-decisions.js';

type Handler<T> = (type: WatchEventType, obj: T) => MetricEffect[];

/** Remembers the phase each object was last seen in and turns each event into effects. */
function phaseTracker<T extends KubernetesObject & { status?: { phase?: string } | null | undefined }>(
  effects: (prevPhase: string | undefined, obj: T) => MetricEffect[],
): Handler<T> {
  const phases = new Map<string, string>();
  return (type, obj) => {
    const name = obj.metadata?.name ?? '';
    if (type === 'delete') {
      phases.delete(name);
      return [];
    }
    const prev = phases.get(name);
    phases.set(name, obj.status?.phase ?? '');
    return effects(prev, obj);
  };
}

export async function startServerMetricsObserver(ctx: ServerContext): Promise<Stoppable> {
  const metrics = ctx.metrics;
  if (!metrics) return { stop: async () => {} };
  const ns = ctx.namespace;
  const log = ctx.logger;
  const watches: ResourceWatch<KubernetesObject>[] = [];

  const watch = async <T extends KubernetesObject>(kind: ResourceKind, handle: Handler<T>): Promise<ResourceWatch<T>> => {
    const client = customClient<T>(ctx.kube, kind, (o) => o as T);
    const w = watchResource<T>({
      kube: ctx.kube,
      path: client.path(ns),
      list: () => client.listForWatch(ns),
      logger: log,
      onEvent: (type, obj) => applySafely(metrics, () => handle(type, obj), log),
    });
    await w.start();
    watches.push(w as unknown as ResourceWatch<KubernetesObject>);
    return w;
  };

  // Manual backups' series exist from the start, as Velero's InitSchedule("").
  metrics.apply(scheduleInitEffects(''));
  await watch<Schedule>(Kinds.Schedule, (type, s) => {
    const name = s.metadata?.name ?? '';
    return type === 'add' ? scheduleInitEffects(name) : type === 'delete' ? scheduleRemoveEffects(name) : [];
  });
  const backups = await watch<Backup>(
    Kinds.Backup,
    phaseTracker<Backup>((prev, b) => backupTransitionEffects(prev, b, ctx.now())),
  );
  metrics.apply(gaugesAtStart(backups.list()));
  const restores = await watch<Restore>(Kinds.Restore, phaseTracker<Restore>(restoreTransitionEffects));

  // The schedule of the backup a request deletes, taken while the backup still exists.
  const deletionSchedules = new Map<string, string>();
  const scheduleOfDeleted = (request: DeleteBackupRequest): string => {
    const name = request.metadata?.name ?? '';
    const remembered = deletionSchedules.get(name);
    if (remembered !== undefined) return remembered;
    const target = backups.get(request.spec?.backupName ?? '', ns);
    const schedule = target ? backupSchedule(target) : '';
    if (target) deletionSchedules.set(name, schedule);
    return schedule;
  };
  const requestPhases = phaseTracker<DeleteBackupRequest>((prev, r) => deleteRequestTransitionEffects(prev, r, scheduleOfDeleted(r)));
  await watch<DeleteBackupRequest>(Kinds.DeleteBackupRequest, (type, r) => {
    const effects = requestPhases(type, r);
    if (type === 'delete' || r.status?.phase === 'Processed') deletionSchedules.delete(r.metadata?.name ?? '');
    return effects;
  });
  await watch<BackupStorageLocation>(Kinds.BackupStorageLocation, (type, l) => locationEffects(l.metadata?.name ?? '', type === 'delete' ? undefined : l));

  metrics.onScrape(() =>
    metrics.apply([
      { op: 'set', metric: ServerMetric.BackupTotal, labels: {}, value: backups.list().length },
      { op: 'set', metric: ServerMetric.RestoreTotal, labels: {}, value: restores.list().length },
    ]),
  );
  log.debug('metrics observer started');
  return {
    async stop() {
      await Promise.all(watches.map((w) => w.stop().catch(() => undefined)));
    },
  };
}

/** A metrics failure (a bug) is logged; it never stops the watch that carried the event. */
function applySafely(metrics: MetricsRegistry, effects: () => MetricEffect[], log: ServerContext['logger']): void {
  try {
    metrics.apply(effects());
  } catch (err) {
    log.error({ err: (err as Error).message }, 'could not update metrics');
  }
}
