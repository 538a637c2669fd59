/**
 * Processes DeleteBackupRequests (docs/storage-locations.md): New → InProgress → Processed.
 *
 * New: the request is checked (backup exists, its location exists and is not ReadOnly); a request that cannot
 * proceed goes straight to Processed with the reason in `status.errors`. A backup still running is canceled first
 * (docs/backup.md "Canceling a backup"): the request stays New until the backup is Canceled. Otherwise the request
 * becomes InProgress and the Backup `Deleting`. InProgress: the backup's pod-volume snapshots and moved CSI snapshots
 * (data movement) are deleted from their repositories and its kept CSI snapshots from the storage system (through
 * VolumeSnapshotContents with deletion policy Delete), then everything of the backup in storage, then the Restores
 * made from it (their `restores/<name>/` files, then the objects), then its PodVolumeBackups, DataUploads, any
 * VolumeSnapshot of it still left, and the Backup object. Every step is
 * idempotent, so a server restart in the middle simply runs the InProgress step again. Processed requests are
 * removed 24 hours after they were made, as Velero does.
 */
import {
  BackupPhase,
  BackupRunningPhases,
  BackupStorageLocationAccessMode,
  CANCELABLE_BACKUP_PHASES,
  DeleteBackupRequestPhase,
  Kinds,
  Labels,
  creationTimestampOf,
  labelValue,
  parseBackup,
  parseDeleteBackupRequest,
  parseRestore,
  requestCancel,
  type Backup,
  type DeleteBackupRequest,
  type Restore,
} from '../api/index.js';
import { customClient } from '../kube/custom.js';
import { startCustomController, type ObjectKey, type ReconcileResult } from '../kube/controller.js';
import { LocationResolver } from '../storage/locations.js';
import { deletePodVolumeBackupObjects, deletePodVolumeSnapshots } from './podvolume/backup-snapshots.js';
import type { ServerContext, Stoppable } from './context.js';
import { deleteBackupVolumeSnapshots, deleteDataUploadObjects, deleteMovedSnapshots } from './datamover/backup-cleanup.js';
import { runDeleteItemActions } from './delete-item-actions.js';
import { ItemActionRegistry } from '../plugins/item-actions/registry.js';
import { deleteKeptCsiSnapshots } from './csi/snapshot-delete.js';

/** How long processed requests are kept (Velero's deleteBackupRequestMaxAge). */
export const PROCESSED_REQUEST_MAX_AGE_MS = 24 * 3600_000;

/** Phases in which the backup is still being written (all running phases but New); deleting it then is refused. */
const STILL_RUNNING: ReadonlySet<string> = new Set(BackupRunningPhases.filter((p) => p !== BackupPhase.New));

/** Why a deletion cannot start (Velero's wording), or undefined when it can. */
export function deletionRefusal(opts: { backup: Backup | undefined; location: { spec: { accessMode?: string | undefined } } | undefined; locationName: string }): string | undefined {
  if (!opts.backup) return 'backup not found';
  if (STILL_RUNNING.has(opts.backup.status?.phase ?? '')) return 'backup is still in progress';
  if (!opts.location) return `backup storage location ${opts.locationName} not found`;
  if (opts.location.spec.accessMode === BackupStorageLocationAccessMode.ReadOnly) {
    return `cannot delete backup because backup storage location ${opts.locationName} is currently in read-only mode`;
  }
  return undefined;
}

/** How often a request for a backup being canceled looks at it again. */
export const CANCEL_FIRST_POLL_MS = 2000;

export type DeletionStep =
  /** The backup is running or being canceled: it is canceled (if not asked yet) and the deletion waits for it. */
  | { step: 'cancel-first' }
  /** Checked: refused with the reason, or started. */
  | { step: 'check' };

export function deletionStep(backup: Backup | undefined): DeletionStep {
  const phase = backup?.status?.phase ?? '';
  if (backup && (STILL_RUNNING.has(phase) || phase === BackupPhase.Canceling)) return { step: 'cancel-first' };
  return { step: 'check' };
}

/** Restores made from the named backup. */
export function restoresOfBackup(restores: readonly Restore[], backupName: string): string[] {
  return restores.filter((r) => r.spec.backupName === backupName).map((r) => r.metadata.name ?? '').filter(Boolean);
}

const oneLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);

export function deleteBackupRequestReconciler(ctx: ServerContext, resolver = new LocationResolver(ctx.kube, ctx.namespace, ctx.plugins?.locations)) {
  const requests = customClient<DeleteBackupRequest>(ctx.kube, Kinds.DeleteBackupRequest, parseDeleteBackupRequest);
  const backups = customClient<Backup>(ctx.kube, Kinds.Backup, parseBackup);
  const restores = customClient<Restore>(ctx.kube, Kinds.Restore, parseRestore);
  const log = ctx.logger;

  const finish = (key: ObjectKey, errors: string[]) =>
    requests.updateStatus(key.namespace, key.name, (o) => {
      if (o.status?.phase === DeleteBackupRequestPhase.Processed) return false;
      o.status = { phase: DeleteBackupRequestPhase.Processed, ...(errors.length ? { errors } : {}) };
    });

  async function start(key: ObjectKey, request: DeleteBackupRequest): Promise<ReconcileResult | void> {
    const backupName = request.spec.backupName;
    const backup = await backups.get(key.namespace, backupName);
    if (deletionStep(backup).step === 'cancel-first') {
      let asked = false;
      await backups.update(key.namespace, backupName, (b) => (asked = CANCELABLE_BACKUP_PHASES.has(b.status?.phase ?? '') && requestCancel(b, ctx.now())));
      if (asked) log.info({ request: key.name, backup: backupName }, 'the backup to delete is still running: canceling it first');
      return { requeueAfterMs: CANCEL_FIRST_POLL_MS };
    }
    const locationName = backup?.spec.storageLocation ?? '';
    const location = backup && locationName ? await resolver.get(locationName) : undefined;
    const refusal = deletionRefusal({ backup, location, locationName });
    if (refusal || !backup) {
      log.warn({ request: key.name, backup: backupName, reason: refusal }, 'backup deletion refused');
      await finish(key, [refusal ?? 'backup not found']);
      return;
    }
    // Label the request as the CLI does, so `backup describe` and GC find it even when a user made it by hand.
    await requests.update(key.namespace, key.name, (o) => {
      const want = { [Labels.BackupName]: labelValue(backupName), [Labels.BackupUID]: backup.metadata.uid ?? '' };
      const labels = o.metadata.labels ?? {};
      if (Object.entries(want).every(([k, v]) => labels[k] === v)) return false;
      o.metadata.labels = { ...labels, ...want };
    });
    await backups.updateStatus(key.namespace, backupName, (o) => {
      if (o.status?.phase === BackupPhase.Deleting) return false;
      o.status = { ...(o.status ?? {}), phase: BackupPhase.Deleting };
    });
    await requests.updateStatus(key.namespace, key.name, (o) => {
      if ((o.status?.phase ?? DeleteBackupRequestPhase.New) !== DeleteBackupRequestPhase.New) return false;
      o.status = { ...(o.status ?? {}), phase: DeleteBackupRequestPhase.InProgress };
    });
    log.info({ request: key.name, backup: backupName }, 'deleting backup');
  }

  async function run(key: ObjectKey, request: DeleteBackupRequest): Promise<void> {
    const backupName = request.spec.backupName;
    const backup = await backups.get(key.namespace, backupName);
    if (!backup) {
      // Already gone (e.g. deleted just before a restart): nothing left to do.
      await finish(key, []);
      return;
    }
    const errors: string[] = [];
    const locationName = backup.spec.storageLocation ?? '';
    const resolved = await resolver.resolve(locationName).catch((err: unknown) => {
      errors.push(`cannot open backup storage location ${locationName}: ${oneLine(err)}`);
      return undefined;
    });
    if (!resolved && !errors.length) errors.push(`backup storage location ${locationName} not found`);
    // DeleteItemActions (plugins) see the backup's items before anything of it is removed.
    if (resolved && ctx.plugins?.external.list('DeleteItemAction').length) {
      const session = ctx.plugins.session([log.child({ backup: backupName })]);
      try {
        const registry = await ctx.plugins.actionsFor(session, new ItemActionRegistry(), new Set(['delete'] as const));
        await runDeleteItemActions({ backup, store: resolved.store, registry, log: log.child({ backup: backupName }) });
      } catch (err) {
        errors.push(`error invoking delete item actions: ${oneLine(err)}`);
        await finish(key, errors);
        return;
      } finally {
        await session.close();
      }
    }
    // Pod-volume snapshots first, while the backup's files still name them; on failure the files stay for a retry.
    const snapshots = await deletePodVolumeSnapshots({ kube: ctx.kube, namespace: key.namespace, backup, store: resolved?.store, log }).catch((err: unknown) => ({
      deleted: 0,
      errors: [`error deleting pod volume snapshots: ${oneLine(err)}`],
    }));
    errors.push(...snapshots.errors.map((e) => e.split('\n')[0]!.slice(0, 300)));
    if (snapshots.deleted) log.info({ backup: backupName, snapshots: snapshots.deleted }, 'pod volume snapshots deleted');
    const moved = await deleteMovedSnapshots({ kube: ctx.kube, namespace: key.namespace, backup, store: resolved?.store, log }).catch((err: unknown) => ({
      deleted: 0,
      errors: [`error deleting moved volume snapshots: ${oneLine(err)}`],
    }));
    errors.push(...moved.errors.map((e) => e.split('\n')[0]!.slice(0, 300)));
    if (moved.deleted) log.info({ backup: backupName, snapshots: moved.deleted }, 'moved volume snapshots deleted');
    const kept = await deleteKeptCsiSnapshots({ kube: ctx.kube, namespace: key.namespace, backup, store: resolved?.store, log, timeoutMs: ctx.config.resourceTimeoutMs }).catch((err: unknown) => ({
      deleted: 0,
      kept: 0,
      errors: [`error deleting CSI snapshots: ${oneLine(err)}`],
    }));
    errors.push(...kept.errors.map((e) => e.split('\n')[0]!.slice(0, 300)));
    if (kept.deleted || kept.kept) log.info({ backup: backupName, deleted: kept.deleted, keptByClassPolicy: kept.kept }, 'CSI snapshots deleted');
    if (resolved && snapshots.errors.length === 0 && moved.errors.length === 0 && kept.errors.length === 0) {
      try {
        const n = await resolved.store.deleteBackup(backupName);
        log.info({ backup: backupName, objects: n }, 'backup objects deleted from storage');
      } catch (err) {
        errors.push(`error deleting backup files from storage: ${oneLine(err)}`);
      }
    }
    for (const restoreName of restoresOfBackup(await restores.list(key.namespace), backupName)) {
      try {
        if (resolved) await resolved.store.deleteRestore(restoreName);
        await restores.delete(key.namespace, restoreName);
      } catch (err) {
        errors.push(`error deleting restore ${restoreName}: ${oneLine(err)}`);
      }
    }
    if (errors.length === 0) {
      await deletePodVolumeBackupObjects({ kube: ctx.kube, namespace: key.namespace, backupUid: backup.metadata.uid ?? '' });
      await deleteDataUploadObjects({ kube: ctx.kube, namespace: key.namespace, backupUid: backup.metadata.uid ?? '' });
      await deleteBackupVolumeSnapshots({ kube: ctx.kube, backupUid: backup.metadata.uid ?? '', log });
      await backups.delete(key.namespace, backupName);
      log.info({ request: key.name, backup: backupName }, 'backup deleted');
    } else {
      log.warn({ request: key.name, backup: backupName, errors }, 'backup deletion failed');
    }
    await finish(key, errors);
  }

  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    const request = await requests.get(key.namespace, key.name);
    if (!request) return;
    const phase = request.status?.phase ?? DeleteBackupRequestPhase.New;
    if (phase === DeleteBackupRequestPhase.New) return start(key, request);
    if (phase === DeleteBackupRequestPhase.InProgress) return void (await run(key, request));
    const createdAt = creationTimestampOf(request)?.getTime() ?? ctx.now().getTime();
    const age = ctx.now().getTime() - createdAt;
    if (age >= PROCESSED_REQUEST_MAX_AGE_MS) {
      await requests.delete(key.namespace, key.name);
      return;
    }
    return { requeueAfterMs: PROCESSED_REQUEST_MAX_AGE_MS - age };
  };
}

export async function startDeleteBackupRequestController(ctx: ServerContext): Promise<Stoppable> {
  const client = customClient<DeleteBackupRequest>(ctx.kube, Kinds.DeleteBackupRequest, parseDeleteBackupRequest);
  return startCustomController<DeleteBackupRequest>(ctx, client, {
    name: 'delete-backup-request',
    reconcile: deleteBackupRequestReconciler(ctx),
  });
}
