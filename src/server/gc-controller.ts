/**
 * Expires backups past their TTL by creating DeleteBackupRequests (docs/storage-locations.md gc-failure).
 *
 * Each Backup is requeued at its `status.expiration` (so a 5 s TTL is honoured within seconds) and every
 * --garbage-collection-frequency as a sweep. An expired backup gets one DeleteBackupRequest; while one is pending no
 * other is made, and after a request was processed without deleting the backup, the next try waits one GC period.
 * Backups whose location is missing, ReadOnly or Unavailable are not expired; the label `velero.io/gc-failure` says
 * why, and is removed once expiry can proceed.
 */
import {
  BackupPhase,
  BackupRunningPhases,
  BackupStorageLocationAccessMode,
  BackupStorageLocationPhase,
  DeleteBackupRequestPhase,
  Kinds,
  Labels,
  creationTimestampOf,
  labelValue,
  newDeleteBackupRequest,
  parseBackup,
  parseBackupStorageLocation,
  parseDeleteBackupRequest,
  type Backup,
  type BackupStorageLocation,
  type DeleteBackupRequest,
} from '../api/index.js';
import { customClient } from '../kube/custom.js';
import { startCustomController, type ObjectKey, type ReconcileResult } from '../kube/controller.js';
import type { ServerContext, Stoppable } from './context.js';

/** Values of the `velero.io/gc-failure` label (Velero's, plus BSLUnavailable). */
export const GcFailure = {
  LocationNotFound: 'BSLNotFound',
  LocationReadOnly: 'BSLReadOnly',
  LocationUnavailable: 'BSLUnavailable',
} as const;
export type GcFailure = (typeof GcFailure)[keyof typeof GcFailure];

/**
 * Phases in which a backup is still being written: expiry waits for them to end. (A backup left `Deleting` by a
 * failed deletion is expired again: the pending-request check below keeps two deletions from overlapping.)
 */
const NOT_EXPIRABLE: ReadonlySet<string> = new Set(BackupRunningPhases);

export type GcDecision =
  | { action: 'none'; reason: string }
  | { action: 'wait'; ms: number }
  | { action: 'label'; failure: GcFailure }
  | { action: 'delete' };

/**
 * What to do about one backup now. `location` is the backup's storage location (undefined = not found);
 * `requests` are the DeleteBackupRequests already made for this backup.
 */
export function gcDecision(opts: {
  backup: Backup;
  location: BackupStorageLocation | undefined;
  requests: readonly DeleteBackupRequest[];
  now: Date;
  gcFrequencyMs: number;
}): GcDecision {
  const { backup, now } = opts;
  const expirationText = backup.status?.expiration;
  if (!expirationText) return { action: 'none', reason: 'no expiration' };
  const expiration = Date.parse(expirationText);
  if (Number.isNaN(expiration)) return { action: 'none', reason: `unreadable expiration ${expirationText}` };
  if (expiration > now.getTime()) return { action: 'wait', ms: Math.min(expiration - now.getTime(), opts.gcFrequencyMs) };
  const phase = backup.status?.phase ?? BackupPhase.New;
  if (NOT_EXPIRABLE.has(phase)) return { action: 'none', reason: `backup is ${phase}` };
  if (!opts.location) return { action: 'label', failure: GcFailure.LocationNotFound };
  if (opts.location.spec.accessMode === BackupStorageLocationAccessMode.ReadOnly) return { action: 'label', failure: GcFailure.LocationReadOnly };
  if (opts.location.status?.phase !== BackupStorageLocationPhase.Available) return { action: 'label', failure: GcFailure.LocationUnavailable };
  if (opts.requests.some((r) => r.status?.phase !== DeleteBackupRequestPhase.Processed)) return { action: 'none', reason: 'a deletion is already under way' };
  const lastTry = Math.max(0, ...opts.requests.map((r) => creationTimestampOf(r)?.getTime() ?? 0));
  if (lastTry && now.getTime() - lastTry < opts.gcFrequencyMs) return { action: 'wait', ms: lastTry + opts.gcFrequencyMs - now.getTime() };
  return { action: 'delete' };
}

/** The DeleteBackupRequest GC (and `backup delete`) makes for a backup: generateName `<backup>-`, Velero's labels. */
export function deleteRequestFor(backup: Backup, namespace: string): DeleteBackupRequest {
  const name = backup.metadata.name ?? '';
  return newDeleteBackupRequest({
    namespace,
    generateName: `${name}-`,
    labels: { [Labels.BackupName]: labelValue(name), [Labels.BackupUID]: backup.metadata.uid ?? '' },
    spec: { backupName: name },
  });
}

export function gcReconciler(ctx: ServerContext) {
  const backups = customClient<Backup>(ctx.kube, Kinds.Backup, parseBackup);
  const locations = customClient<BackupStorageLocation>(ctx.kube, Kinds.BackupStorageLocation, parseBackupStorageLocation);
  const requests = customClient<DeleteBackupRequest>(ctx.kube, Kinds.DeleteBackupRequest, parseDeleteBackupRequest);

  const setFailureLabel = (key: ObjectKey, failure: GcFailure | undefined) =>
    backups.update(key.namespace, key.name, (o) => {
      const current = o.metadata.labels?.[Labels.GCFailure];
      if (current === failure) return false;
      const labels = { ...(o.metadata.labels ?? {}) };
      if (failure) labels[Labels.GCFailure] = failure;
      else delete labels[Labels.GCFailure];
      o.metadata.labels = labels;
    });

  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    const backup = await backups.get(key.namespace, key.name);
    if (!backup) return;
    const expiration = backup.status?.expiration ? Date.parse(backup.status.expiration) : NaN;
    if (Number.isNaN(expiration)) return;
    if (expiration > ctx.now().getTime()) return { requeueAfterMs: Math.min(expiration - ctx.now().getTime(), ctx.config.gcFrequencyMs) };

    const locationName = backup.spec.storageLocation ?? '';
    const location = locationName ? await locations.get(ctx.namespace, locationName) : undefined;
    const selector = `${Labels.BackupName}=${labelValue(key.name)},${Labels.BackupUID}=${backup.metadata.uid ?? ''}`;
    const existing = await requests.list(key.namespace, selector);
    const decision = gcDecision({ backup, location, requests: existing, now: ctx.now(), gcFrequencyMs: ctx.config.gcFrequencyMs });
    switch (decision.action) {
      case 'none':
        return;
      case 'wait':
        return { requeueAfterMs: decision.ms };
      case 'label':
        await setFailureLabel(key, decision.failure);
        ctx.logger.warn({ backup: key.name, reason: decision.failure }, 'expired backup cannot be garbage-collected yet');
        return { requeueAfterMs: ctx.config.gcFrequencyMs };
      case 'delete': {
        if (backup.metadata.labels?.[Labels.GCFailure]) await setFailureLabel(key, undefined);
        const created = await requests.create(deleteRequestFor(backup, key.namespace));
        ctx.logger.info({ backup: key.name, request: created.metadata.name }, 'backup expired; deletion requested');
        return { requeueAfterMs: ctx.config.gcFrequencyMs };
      }
    }
  };
}

export async function startGcController(ctx: ServerContext): Promise<Stoppable> {
  const client = customClient<Backup>(ctx.kube, Kinds.Backup, parseBackup);
  return startCustomController<Backup>(ctx, client, {
    name: 'gc',
    reconcile: gcReconciler(ctx),
    resyncMs: ctx.config.gcFrequencyMs,
    ...(ctx.clock ? { clock: ctx.clock } : {}),
  });
}
