/**
 * BackupRepository controller (docs/repositories.md): connects each repository with the data path and
 * keeps it maintained.
 *
 * New or NotReady → open the repository under the location's `kopia/<volumeNamespace>/`, or initialise it there →
 * Ready, or NotReady with the reason. A Velero kopia repository found there is Ready for restores (a password must
 * open it) and never written: no maintenance, and fs-backups into it fail in the data mover with the reason. A missing or Unavailable location makes the repository NotReady; location
 * changes are watched, so this happens within moments. Ready repositories are maintained every
 * `spec.maintenanceFrequency` (in this process; Velero runs a Job), each run recorded in `status.recentMaintenance`.
 * The password comes from Secret velero-repo-credentials (created with a random value when missing) and appears in
 * no log line, Event or status message.
 */
import {
  BackupRepositoryMaintenanceResult,
  BackupRepositoryPhase,
  BackupStorageLocationPhase,
  Kinds,
  parseBackupRepository,
  parseBackupStorageLocation,
  type BackupRepository,
  type BackupStorageLocation,
  statusTime,
} from '../api/index.js';
import { customClient } from '../kube/custom.js';
import { eventRecorder } from '../kube/events.js';
import { startCustomController, type ObjectKey, type ReconcileResult } from '../kube/controller.js';
import { watchResource } from '../kube/informer.js';
import { ensureRepositoryPassword } from './repository/credentials.js';
import { connectOrInitialise, describeConnectError, describeMaintenance, runMaintenance } from './repository/connect.js';
import { maintenanceDueInMs, maintenanceFrequencyMs, withMaintenanceEntry } from './repository/naming.js';
import type { ObjectStore } from '../plugins/object-store/index.js';
import { holdsVeleroKopiaRepository, veleroKopiaPassword } from '../storage/velero-kopia.js';
import { podLockLiveness } from '../storage/lock-owner.js';
import { openRepositoryStore, repositoryStoragePrefix } from '../storage/repository-store.js';
import type { ServerContext, Stoppable } from './context.js';
import { secondsBetween } from '../base/metrics.js';
import { maintenanceEffects, repositoryRemoveEffects } from './metrics/metrics-decisions.js';

/** How often a NotReady repository is retried, and the longest a Ready one goes without its location re-checked. */
export const RECHECK_MS = 60_000;
/** After a failed maintenance, the next attempt waits at most this long (or one period, if shorter). */
export const MAINTENANCE_RETRY_MS = 5 * 60_000;

export interface RepositoryReadiness {
  phase: 'Ready' | 'NotReady';
  message: string;
}

/** NotReady with a reason when the location is missing or Unavailable; undefined when it may be used. */
export function locationProblem(name: string, location: BackupStorageLocation | undefined): string | undefined {
  if (!location) return `backup storage location "${name}" not found`;
  if (location.status?.phase === BackupStorageLocationPhase.Unavailable) {
    return `backup storage location "${name}" is unavailable${location.status.message ? `: ${location.status.message}` : ''}`;
  }
  return undefined;
}

/** Why cairn cannot serve this repository at all (a type other than kopia), or undefined. */
export function unsupportedRepository(repo: BackupRepository): string | undefined {
  const type = repo.spec.repositoryType ?? '';
  if (type === '' || type === 'kopia') return undefined;
  return `repository type "${type}" is not supported: cairn keeps fs-backup data in its own repositories under kopia/`;
}

export interface RepositoryControllerOptions {
  /** Maintenance grace period passed to the data path (default: the data path's, 1 hour). */
  maintenanceGracePeriodMs?: number;
  /** Aborts a running maintenance (the server is stopping). */
  signal?: AbortSignal;
}

export function backupRepositoryReconciler(ctx: ServerContext, options: RepositoryControllerOptions = {}) {
  const repos = customClient<BackupRepository>(ctx.kube, Kinds.BackupRepository, parseBackupRepository);
  const locations = customClient<BackupStorageLocation>(ctx.kube, Kinds.BackupStorageLocation, parseBackupStorageLocation);
  const events = eventRecorder(ctx.kube, { component: 'cairn-server' });
  const log = ctx.logger;
  /** Repositories this process connected to, with the location and repository specs used: a change reconnects. */
  const connected = new Map<string, string>();
  /** When maintenance last failed, per repository (failures do not move lastMaintenanceTime). */
  const lastFailedMaintenance = new Map<string, number>();
  /** Repositories that are Velero's kopia repositories: read for restores, never maintained or written. */
  const readOnly = new Set<string>();

  const record = (obj: BackupRepository, type: 'Normal' | 'Warning', reason: string, message: string) =>
    events.event(obj, type, reason, message).catch((err: unknown) => log.debug({ err: (err as Error).message }, 'could not record an Event'));

  async function setPhase(key: ObjectKey, before: BackupRepository, readiness: RepositoryReadiness): Promise<BackupRepository | undefined> {
    const written = await repos.updateStatus(key.namespace, key.name, (o) => {
      const status = o.status ?? {};
      if (status.phase === readiness.phase && (status.message ?? '') === readiness.message && (readiness.phase !== 'Ready' || status.lastMaintenanceTime)) return false;
      status.phase = readiness.phase;
      if (readiness.message) status.message = readiness.message;
      else delete status.message;
      // As Velero: a repository counts as maintained when first connected, so the first run is one period later.
      if (readiness.phase === 'Ready' && !status.lastMaintenanceTime) status.lastMaintenanceTime = statusTime(ctx.now());
      o.status = status;
    });
    if (written && (before.status?.phase !== readiness.phase || (before.status?.message ?? '') !== readiness.message)) {
      const ready = readiness.phase === 'Ready';
      log[ready ? 'info' : 'warn']({ repository: key.name, phase: readiness.phase, reason: readiness.message || undefined }, 'backup repository phase changed');
      await record(written, ready ? 'Normal' : 'Warning', ready ? 'RepositoryReady' : 'RepositoryNotReady', ready ? `backup repository ${key.name} is ready` : readiness.message);
    }
    return written;
  }

  async function maintain(key: ObjectKey, repo: BackupRepository, location: BackupStorageLocation): Promise<ReconcileResult> {
    const period = maintenanceFrequencyMs(repo);
    const failedAt = lastFailedMaintenance.get(key.name);
    const retryIn = failedAt === undefined ? 0 : Math.max(0, failedAt + Math.min(period, MAINTENANCE_RETRY_MS) - ctx.now().getTime());
    const due = Math.max(maintenanceDueInMs(repo, ctx.now()), retryIn);
    if (due > 0) return { requeueAfterMs: Math.min(due, RECHECK_MS) };

    const started = statusTime(ctx.now());
    let outcome: Parameters<typeof describeMaintenance>[0];
    let sizeBytes: number | undefined;
    try {
      const { password } = await ensureRepositoryPassword({ kube: ctx.kube, namespace: ctx.namespace });
      const store = await openRepositoryStore({ location, volumeNamespace: repo.spec.volumeNamespace, kube: ctx.kube });
      outcome = {
        result: await runMaintenance({
          store,
          password,
          // Locks left by data-mover pods that are gone are cleared now rather than after they go stale.
          locking: { liveness: podLockLiveness(ctx.kube) },
          ...(options.maintenanceGracePeriodMs !== undefined ? { gracePeriodMs: options.maintenanceGracePeriodMs } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        }),
      };
      if (ctx.metrics) sizeBytes = await storedBytes(store).catch(() => undefined);
    } catch (error) {
      // Stopping: the run is not a failure of the repository; the next server runs it again.
      if (options.signal?.aborted) return {};
      outcome = { error };
    }
    const completed = statusTime(ctx.now());
    const ok = 'result' in outcome;
    const message = describeMaintenance(outcome);
    if (ok) lastFailedMaintenance.delete(key.name);
    else lastFailedMaintenance.set(key.name, Date.parse(completed));
    const written = await repos.updateStatus(key.namespace, key.name, (o) => {
      const status = o.status ?? {};
      status.recentMaintenance = withMaintenanceEntry(status.recentMaintenance, {
        result: ok ? BackupRepositoryMaintenanceResult.Succeeded : BackupRepositoryMaintenanceResult.Failed,
        startTimestamp: started,
        completeTimestamp: completed,
        message,
      });
      if (ok) status.lastMaintenanceTime = completed;
      o.status = status;
    });
    log[ok ? 'info' : 'warn']({ repository: key.name, result: ok ? 'Succeeded' : 'Failed', detail: message }, 'backup repository maintenance');
    ctx.metrics?.apply(maintenanceEffects({ repository: key.name, ok, seconds: secondsBetween(started, completed) ?? 0, sizeBytes }));
    if (written && !ok) await record(written, 'Warning', 'MaintenanceFailed', message);
    return { requeueAfterMs: Math.min(ok ? period : Math.min(period, MAINTENANCE_RETRY_MS), RECHECK_MS) };
  }

  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    const repo = await repos.get(key.namespace, key.name);
    if (!repo) {
      ctx.metrics?.apply(repositoryRemoveEffects(key.name));
      connected.delete(key.name);
      lastFailedMaintenance.delete(key.name);
      readOnly.delete(key.name);
      return;
    }
    const bsl = repo.spec.backupStorageLocation;
    const location = await locations.get(key.namespace, bsl);
    const problem = unsupportedRepository(repo) ?? locationProblem(bsl, location);
    if (problem || !location) {
      connected.delete(key.name);
      await setPhase(key, repo, { phase: 'NotReady', message: problem ?? '' });
      return { requeueAfterMs: RECHECK_MS };
    }

    // The location's spec, not its resourceVersion: validation rewrites its status every minute.
    const version = `${JSON.stringify(location.spec)} ${JSON.stringify(repo.spec)}`;
    let current = repo;
    let readyMessage = '';
    if (repo.status?.phase !== BackupRepositoryPhase.Ready || connected.get(key.name) !== version) {
      const where = `${location.spec.objectStorage.bucket}/${repositoryStoragePrefix(location.spec.objectStorage.prefix, repo.spec.volumeNamespace)}`;
      try {
        const { password, created } = await ensureRepositoryPassword({ kube: ctx.kube, namespace: ctx.namespace });
        if (created) log.info({ secret: 'velero-repo-credentials', namespace: ctx.namespace }, 'created the repository password Secret with a random password');
        const store = await openRepositoryStore({ location, volumeNamespace: repo.spec.volumeNamespace, kube: ctx.kube });
        const veleroKopia = await connectVeleroKopia(store, password);
        if (veleroKopia) {
          readOnly.add(key.name);
          readyMessage = veleroKopia;
          log.info({ repository: key.name, location: bsl, volumeNamespace: repo.spec.volumeNamespace }, 'backup repository is a Velero kopia repository: read for restores only');
        } else {
          readOnly.delete(key.name);
          const { initialised } = await connectOrInitialise({ store, password });
          log.info({ repository: key.name, location: bsl, volumeNamespace: repo.spec.volumeNamespace }, initialised ? 'initialised backup repository' : 'connected to backup repository');
        }
      } catch (err) {
        connected.delete(key.name);
        await setPhase(key, repo, { phase: 'NotReady', message: describeConnectError(err, where) });
        return { requeueAfterMs: RECHECK_MS };
      }
      const written = await setPhase(key, repo, { phase: 'Ready', message: readyMessage });
      if (!written) return;
      connected.set(key.name, version);
      current = written;
    }
    // cairn never writes into a Velero kopia repository: Velero's maintenance is Velero's business.
    if (readOnly.has(key.name)) return { requeueAfterMs: RECHECK_MS };
    return maintain(key, current, location);
  };
}

/**
 * A Velero kopia repository in the place (and no cairn repository): the Ready message, after checking a password
 * opens it; undefined when the place is not Velero's.
 */
/** The bytes every object of a repository takes in its storage location (its size after maintenance). */
async function storedBytes(store: ObjectStore): Promise<number> {
  let total = 0;
  for await (const o of store.list('')) total += o.size;
  return total;
}

async function connectVeleroKopia(store: ObjectStore, password: string): Promise<string | undefined> {
  if ((await store.head('config')) || !(await holdsVeleroKopiaRepository(store))) return undefined;
  const source = await veleroKopiaPassword(store, password);
  return `Velero kopia repository: cairn restores from it and never writes to it (no maintenance, no new backups)${source === 'velero-default' ? "; it opens with Velero's default password" : ''}`;
}

export async function startBackupRepositoryController(ctx: ServerContext, options: RepositoryControllerOptions = {}): Promise<Stoppable> {
  const repos = customClient<BackupRepository>(ctx.kube, Kinds.BackupRepository, parseBackupRepository);
  const locations = customClient<BackupStorageLocation>(ctx.kube, Kinds.BackupStorageLocation, parseBackupStorageLocation);
  const stopping = new AbortController();
  const controller = await startCustomController<BackupRepository>(ctx, repos, {
    name: 'backup-repository',
    reconcile: backupRepositoryReconciler(ctx, { ...options, signal: options.signal ? AbortSignal.any([options.signal, stopping.signal]) : stopping.signal }),
    concurrency: 2,
  });
  // A location that changes (deleted, Unavailable, fixed) re-checks the repositories in it at once.
  const locationWatch = watchResource<BackupStorageLocation>({
    kube: ctx.kube,
    logger: ctx.logger,
    path: locations.path(ctx.namespace),
    list: () => locations.listForWatch(ctx.namespace),
    onEvent: (_type, location) => {
      for (const repo of controller.watch.list()) {
        if (repo.spec.backupStorageLocation === location.metadata.name) controller.enqueue({ namespace: ctx.namespace, name: repo.metadata.name ?? '' });
      }
    },
  });
  await locationWatch.start();
  return {
    async stop() {
      stopping.abort();
      await locationWatch.stop();
      await controller.stop();
    },
  };
}
