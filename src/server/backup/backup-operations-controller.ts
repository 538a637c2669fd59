/**
 * Tracks the PodVolumeBackups and DataUploads of backups whose items are stored (Velero's upload progress monitoring: item operations), on its own queue so the
 * backup controller can run the next backup meanwhile:
 *   WaitingForPluginOperations*  → counts PVBs and DataUploads into status.backupItemOperationsAttempted/Completed/
 *                                  Failed; when all are terminal → Finalizing*; PVBs past the fs-backup timeout and
 *                                  DataUploads past the item operation timeout are canceled and count as failed;
 *   Finalizing* (with either)    → deletes the DataUploads' source VolumeSnapshots, writes
 *                                  `-podvolumebackups.json.gz`, `-itemoperations.json.gz`, `-volumeinfo.json.gz`,
 *                                  the results and log with their errors, then velero-backup.json with the final
 *                                  phase: Completed, or PartiallyFailed when one did not complete or the items had
 *                                  errors.
 * Everything is read from the cluster and the location each time, so a restarted server simply carries on
 * (Velero fails such backups; cairn resumes them). Re-running the finalization writes the same files again.
 * A backup it owns that is asked to be canceled goes Canceling here (between two looks, never mid-finalization).
 */
import {
  ApiVersionV1,
  BackupPhase,
  Kinds,
  Labels,
  parseBackup,
  parseBackupOperations,
  parsePodVolumeBackup,
  type Backup,
  type BackupOperation,
  type DataUpload,
  type PodVolumeBackup,
  statusTime,
} from '../../api/index.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { customClient, type ResourceKind } from '../../kube/custom.js';
import { startCustomController, type ObjectKey, type ReconcileResult } from '../../kube/controller.js';
import type { ServerContext, Stoppable } from '../context.js';
import { count, type Results } from '../../api/results.js';
import { LocationResolver } from '../../storage/locations.js';
import type { BackupVolumeInfo } from '../../api/volume-info.js';
import { cancelPodVolumeBackups } from '../podvolume/backup-cancel.js';
import { backupOperationFor, fsBackupTimeoutMs, mergeVolumeInfo, podVolumeErrors, trackPodVolumeBackups } from '../podvolume/backup-tracking.js';
import { createBackupLog } from './backup-log.js';
import { withTypeMeta } from './run-backup.js';
import { scratchDir } from './scratch-dir.js';
import { cancelDataUploads, deleteSourceSnapshots, listDataUploads } from '../datamover/backup-cleanup.js';
import { readCsiSnapshotInfo } from '../datamover/backup-snapshots.js';
import {
  dataUploadErrors,
  dataUploadOperationFor,
  dataUploadTimeoutMessage,
  isDataUploadTerminal,
  itemOperationTimeoutMs,
  mergeDataMovementVolumeInfo,
  trackDataUploads,
} from '../datamover/backup-tracking.js';
import { itemOperationTimeoutOf } from '../datamover/backup-decision.js';
import { operationIdOfDataUpload } from '../datamover/backup-objects.js';
import { FINALIZING, OPERATIONS_RESYNC_MS, WAITING, addErrors, finalPhase, operationsStep, ownedByOperations, trackOutcome } from './operations-decisions.js';
import type { CSISnapshotInfo } from '../../api/volume-info.js';
import type { BackupStore } from '../../storage/backup-store.js';
import { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import { registerBuiltinBackupActions } from '../item-actions/builtin.js';
import { checkOperations, failedOperationErrors, isOperationPending, isPluginOperation, type OperationsState } from '../plugin-operations.js';
import { finalCsiVolumeInfo, keepsCsiSnapshots, planCsiFinalization, releaseCsiSnapshots, storeCsiSnapshots } from '../csi/backup-finalize.js';
import { csiSnapshotTimeoutMs, readCsiSnapshotStates, trackCsiSnapshots } from '../csi/snapshot-tracking.js';
import { csiSnapshotTimeoutOf } from '../datamover/backup-decision.js';
import { podExecutor } from '../../kube/pod-exec.js';
import { beginCanceling } from './cancel-decisions.js';
import { runReadyPostHooks } from '../hooks/backup-post-hooks.js';

/** Velero's log line when PVBs are still running at the fs-backup timeout. */
export const TIMED_OUT_MESSAGE = 'timed out waiting for all PodVolumeBackups to complete';
/** The log line that marks the finalization's lines as already written (a re-run does not repeat them). */
export const POD_VOLUMES_DONE_LOG = 'Pod volume backups done';
/** The same for the data uploads' lines. */
export const DATA_UPLOADS_DONE_LOG = 'Data uploads done';
/** The same for the plugin operations' lines. */
export const PLUGIN_OPERATIONS_DONE_LOG = 'Plugin operations done';
/** The same for the CSI snapshots' lines. */
export const CSI_SNAPSHOTS_DONE_LOG = 'CSI snapshots done';

export function backupOperationsReconciler(ctx: ServerContext, resolver = new LocationResolver(ctx.kube, ctx.namespace, ctx.plugins?.locations)) {
  const backups = customClient<Backup>(ctx.kube, Kinds.Backup, parseBackup);
  const pvbClient = customClient<PodVolumeBackup>(ctx.kube, Kinds.PodVolumeBackup, parsePodVolumeBackup);
  const log = ctx.logger.child({ controller: 'backup-operations' });
  const builtinActions = registerBuiltinBackupActions(new ItemActionRegistry());

  /** The operations stored with the backup, or none when it has no such file. */
  const storedOperations = async (store: BackupStore, name: string): Promise<BackupOperation[]> => {
    const stored = await store.getBackupJson(name, 'itemOperations');
    return stored === undefined || stored === null ? [] : parseBackupOperations(stored);
  };

  /**
   * One pass over the plugin operations of a waiting backup (./plugin-operations.ts), in a plugin session of its own
   * whose log lines are also appended to the backup's log; the operations are stored again when they changed.
   */
  async function trackPlugins(key: ObjectKey, backup: Backup): Promise<OperationsState<BackupOperation> | undefined> {
    const resolved = await resolver.resolve(backup.spec.storageLocation ?? ctx.config.defaultBackupLocation);
    if (!resolved) return undefined;
    const all = await storedOperations(resolved.store, key.name);
    const mine = all.filter(isPluginOperation);
    if (!mine.length) return undefined;
    if (!mine.some(isOperationPending)) return checkOperations({ operations: mine, owner: backup, kind: 'BackupItemActionV2', actionFor: async () => undefined, timeoutMs: 0, now: ctx.now(), log });
    const extra = createBackupLog({ backup: `${key.namespace}/${key.name}` });
    const session = ctx.plugins?.session([extra.logger, log.child({ backup: key.name })]);
    try {
      const state = await checkOperations({
        operations: mine,
        owner: backup,
        kind: 'BackupItemActionV2',
        actionFor: async (name) => (ctx.plugins && session ? ctx.plugins.backupAction(session, name, builtinActions) : builtinActions.backupAction(name)),
        timeoutMs: itemOperationTimeoutMs(backup),
        now: ctx.now(),
        log: extra.logger,
      });
      if (state.changed) {
        let i = 0;
        await resolved.store.putBackupJson(key.name, 'itemOperations', all.map((op) => (isPluginOperation(op) ? (state.operations[i++] ?? op) : op)));
      }
      if (extra.text()) await resolved.store.putBackupLog(key.name, ((await resolved.store.getBackupLog(key.name)) ?? '') + extra.text());
      return state;
    } finally {
      await session?.close();
    }
  }
  const exec = podExecutor(ctx.kube);

  const listPvbs = async (backup: Backup) => {
    const uid = backup.metadata.uid ?? '';
    const found = uid ? await pvbClient.list(ctx.namespace, `${Labels.BackupUID}=${uid}`) : [];
    return found.sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  };

  async function track(key: ObjectKey, backup: Backup): Promise<ReconcileResult | void> {
    const [pvbs, dus] = await Promise.all([listPvbs(backup), listDataUploads(ctx.kube, ctx.namespace, backup.metadata.uid ?? '')]);
    const nowMs = ctx.now().getTime();
    const startedMs = Date.parse(backup.status?.startTimestamp ?? '') || nowMs;
    const timeoutMs = fsBackupTimeoutMs(backup, ctx.config.fsBackupTimeoutMs);
    const state = trackPodVolumeBackups({ pvbs, startedMs, timeoutMs, nowMs });
    const duState = trackDataUploads({ dataUploads: dus, timeoutMs: itemOperationTimeoutMs(backup), startedMs, nowMs });
    const csiState = trackCsiSnapshots({ states: await readCsiSnapshotStates(ctx.kube, backup), timeoutMs: csiSnapshotTimeoutMs(backup), timeout: csiSnapshotTimeoutOf(backup), nowMs });
    if (state.timedOut) {
      const names = new Set(state.pending.map((p) => p.metadata.name ?? ''));
      const canceled = await cancelPodVolumeBackups({
        kube: ctx.kube,
        namespace: ctx.namespace,
        backupUid: backup.metadata.uid ?? '',
        log,
        only: names,
        message: () => `${TIMED_OUT_MESSAGE} (fs-backup timeout ${Math.round(timeoutMs / 1000)}s), mark it as cancel`,
      });
      // Said once, when they are canceled (DataUploads may keep the backup waiting after that).
      if (canceled.length) log.warn({ backup: key.name, pending: [...names] }, TIMED_OUT_MESSAGE);
    }
    if (duState.expired.length) {
      const timeout = itemOperationTimeoutOf(backup);
      await cancelDataUploads({
        kube: ctx.kube,
        namespace: ctx.namespace,
        backupUid: backup.metadata.uid ?? '',
        log,
        only: new Set(duState.expired.map((d) => d.metadata.name ?? '')),
        message: (du) => dataUploadTimeoutMessage(du, timeout),
      });
    }
    const plugins = await trackPlugins(key, backup);
    // Post hooks of pods whose volumes are now backed up (or whose snapshots are taken) run now.
    const hooks = await runReadyPostHooks({
      kube: ctx.kube,
      backup,
      pvbs,
      dus,
      backups,
      store: async () => (await resolver.resolve(backup.spec.storageLocation ?? ctx.config.defaultBackupLocation))?.store,
      exec,
      log,
    });
    const outcome = trackOutcome({
      backup,
      pvbs: state,
      dataUploads: duState,
      csiSnapshots: csiState,
      hooksWaiting: hooks.waiting,
      ...(plugins ? { pluginOperations: { attempted: plugins.operations.length, completed: plugins.completed, failed: plugins.failed, pending: plugins.pending, syncMs: ctx.config.itemOperationSyncFrequencyMs } } : {}),
      nowMs,
    });
    const { phase, attempted, completed, failed } = outcome;
    await backups.updateStatus(key.namespace, key.name, (b) => {
      if (!WAITING.has(b.status?.phase ?? '')) return false;
      const s = b.status ?? {};
      if (s.phase === phase && s.backupItemOperationsAttempted === attempted && s.backupItemOperationsCompleted === completed && s.backupItemOperationsFailed === failed) return false;
      b.status = {
        ...s,
        phase,
        backupItemOperationsAttempted: Math.max(attempted, s.backupItemOperationsAttempted ?? 0),
        backupItemOperationsCompleted: completed,
        backupItemOperationsFailed: failed,
        ...(csiState.attempted ? { csiVolumeSnapshotsAttempted: csiState.attempted, csiVolumeSnapshotsCompleted: csiState.completed } : {}),
      };
    });
    if (outcome.done) {
      log.info({ backup: key.name, phase, completed, failed, timedOut: state.timedOut || duState.expired.length > 0 }, 'pod volume backups, data uploads and plugin operations done; finalizing');
      return { requeueAfterMs: 0 };
    }
    return { requeueAfterMs: outcome.requeueAfterMs };
  }

  async function finalize(key: ObjectKey, backup: Backup): Promise<void> {
    const name = key.name;
    const pvbs = await listPvbs(backup);
    const now = ctx.now();
    const locationName = backup.spec.storageLocation ?? ctx.config.defaultBackupLocation;
    const resolved = await resolver.resolve(locationName);
    if (!resolved) {
      // Velero: a backup whose location is gone cannot be finalized and ends PartiallyFailed.
      await backups.updateStatus(key.namespace, name, (b) => {
        if (!ownedByOperations(b)) return false;
        b.status = { ...b.status, phase: BackupPhase.PartiallyFailed, completionTimestamp: statusTime(now), failureReason: `backup storage location ${locationName} no longer exists` };
      });
      log.warn({ backup: name, location: locationName }, 'backup storage location is gone; backup ends PartiallyFailed');
      return;
    }
    const store = resolved.store;
    // PVBs still running now are the ones the fs-backup timeout gave up on.
    const timedOut = pvbs.some((p) => !['Completed', 'Failed', 'Canceled'].includes(p.status?.phase ?? ''));
    const pvbErrors = podVolumeErrors(pvbs, timedOut);
    // So are DataUploads still running: the item operation timeout gave up on them.
    const dus = await listDataUploads(ctx.kube, ctx.namespace, backup.metadata.uid ?? '');
    const dusTimedOut = new Set(dus.filter((d) => !isDataUploadTerminal(d)).map((d) => d.metadata.name ?? ''));
    const duErrors = dataUploadErrors(dus, dusTimedOut);
    // Plugin operations as the last pass left them (one still pending here was given up on with the backup).
    const pluginOps = (await storedOperations(store, name)).filter(isPluginOperation);
    const pluginErrors = failedOperationErrors(pluginOps).map((message) => ({ message }));
    const csi = keepsCsiSnapshots(backup) ? await planCsiFinalization({ kube: ctx.kube, backup, store, now }) : undefined;
    const errors = [...pvbErrors, ...(timedOut ? [{ message: TIMED_OUT_MESSAGE }] : []), ...duErrors, ...(csi?.errors ?? []), ...pluginErrors];

    const storedResults = ((await store.getBackupJson(name, 'results')) as Results | undefined) ?? { warnings: {}, errors: {} };
    const results = addErrors({ warnings: storedResults.warnings ?? {}, errors: storedResults.errors ?? {} }, errors);
    const storedInfo = ((await store.getBackupJson(name, 'volumeInfo')) as BackupVolumeInfo[] | null | undefined) ?? [];
    // The source snapshots' details are read before they are deleted (a re-run finds them in the stored entries).
    const sourceSnapshots = new Map<string, CSISnapshotInfo>();
    for (const du of dus) {
      const info = du.spec.csiSnapshot?.volumeSnapshot ? await readCsiSnapshotInfo(ctx.kube, du.spec.sourceNamespace, du.spec.csiSnapshot.volumeSnapshot) : undefined;
      if (info) sourceSnapshots.set(du.metadata.name ?? '', info);
    }
    const withPodVolumes = mergeVolumeInfo(storedInfo, pvbs);
    const withMoved = dus.length ? mergeDataMovementVolumeInfo({ stored: withPodVolumes, dataUploads: dus, csi: sourceSnapshots, timedOut: dusTimedOut }) : withPodVolumes;
    const volumeInfo = csi ? finalCsiVolumeInfo(withMoved, csi, now) : withMoved;
    const operations = [
      ...pvbs.map((pvb) => backupOperationFor({ backup, pvb, timedOut, now })),
      ...dus.map((du) => dataUploadOperationFor({ backup, du, timedOut: dusTimedOut.has(du.metadata.name ?? ''), now })),
      ...(csi?.operations ?? []),
      ...pluginOps,
    ];
    const storedPvbs = pvbs.map((p) => ({ ...p, apiVersion: ApiVersionV1, kind: 'PodVolumeBackup' }));

    const logText = (await store.getBackupLog(name)) ?? '';
    const extra = createBackupLog({ backup: `${key.namespace}/${name}` });
    if ((pvbs.length || (!dus.length && !csi?.attempted)) && !logText.includes(POD_VOLUMES_DONE_LOG)) {
      for (const e of [...pvbErrors, ...(timedOut ? [{ message: TIMED_OUT_MESSAGE }] : [])]) extra.logger.error(e.message);
      for (const p of pvbs) extra.logger.info({ podVolumeBackup: p.metadata.name, pod: `${p.spec.pod.namespace ?? ''}/${p.spec.pod.name ?? ''}`, volume: p.spec.volume, phase: p.status?.phase ?? '', snapshotID: p.status?.snapshotID ?? '' }, 'Pod volume backup');
      extra.logger.info({ podVolumeBackups: pvbs.length, errors: pvbErrors.length }, POD_VOLUMES_DONE_LOG);
    }
    if (csi?.attempted && !logText.includes(CSI_SNAPSHOTS_DONE_LOG)) {
      for (const f of csi.failed) extra.logger.error(f.error);
      for (const k of csi.kept) {
        extra.logger.info(
          { volumeSnapshot: `${k.ref.namespace}/${k.ref.name}`, pvc: `${k.ref.namespace}/${k.ref.pvcName}`, volumeSnapshotContent: k.content.metadata.name, snapshotHandle: k.content.status?.snapshotHandle ?? '' },
          'CSI snapshot',
        );
      }
      extra.logger.info({ csiSnapshots: csi.attempted, errors: csi.failed.length }, CSI_SNAPSHOTS_DONE_LOG);
    }
    if (dus.length && !logText.includes(DATA_UPLOADS_DONE_LOG)) {
      for (const e of duErrors) extra.logger.error(e.message);
      for (const d of dus) {
        extra.logger.info(
          { dataUpload: d.metadata.name, pvc: `${d.spec.sourceNamespace}/${d.spec.sourcePVC}`, operationID: operationIdOfDataUpload(d), phase: d.status?.phase ?? '', snapshotID: d.status?.snapshotID ?? '', bytes: d.status?.progress?.totalBytes ?? 0 },
          'Data upload',
        );
      }
      extra.logger.info({ dataUploads: dus.length, errors: duErrors.length }, DATA_UPLOADS_DONE_LOG);
    }
    if (pluginOps.length && !logText.includes(PLUGIN_OPERATIONS_DONE_LOG)) {
      // As for pod volumes: each failure an error line (what `grep level=error` finds), in the words of the results.
      for (const e of pluginErrors) extra.logger.error(e.message);
      for (const op of pluginOps) {
        const id = op.spec.resourceIdentifier;
        extra.logger.info(
          { action: op.spec.backupItemAction, operationID: op.spec.operationID, resource: `${id.Resource}${id.Group ? `.${id.Group}` : ''} ${id.Namespace ? `${id.Namespace}/` : ''}${id.Name}`, phase: op.status.phase, ...(op.status.error ? { error: op.status.error } : {}) },
          'Plugin operation',
        );
        if (op.spec.postOperationItems?.length) {
          extra.logger.warn({ action: op.spec.backupItemAction, operationID: op.spec.operationID, items: op.spec.postOperationItems.length }, 'the operation named items to back up again once done; cairn does not back them up again (see docs/plugins.md)');
        }
      }
      extra.logger.info({ pluginOperations: pluginOps.length, errors: pluginErrors.length }, PLUGIN_OPERATIONS_DONE_LOG);
    }
    if (extra.text()) await store.putBackupLog(name, logText + extra.text());
    await store.putBackupJson(name, 'podVolumeBackups', storedPvbs);
    await store.putBackupJson(name, 'itemOperations', operations);
    await store.putBackupJson(name, 'volumeInfo', volumeInfo);
    await store.putBackupJson(name, 'results', results);
    // The data is in the repository (or given up on): the local snapshots are not kept.
    if (dus.length) await deleteSourceSnapshots({ kube: ctx.kube, dataUploads: dus, log });
    // Kept CSI snapshots go into the backup's files, then leave the cluster (their storage snapshot stays).
    if (csi?.attempted) {
      await storeCsiSnapshots({ store, backup, plan: csi, log, tmpDir: scratchDir() });
      await releaseCsiSnapshots({ kube: ctx.kube, plan: csi, log });
    }

    const attempted = pvbs.length + dus.length + (csi?.attempted ?? 0) + pluginOps.length;
    const completed =
      pvbs.filter((p) => p.status?.phase === 'Completed').length +
      dus.filter((d) => d.status?.phase === 'Completed').length +
      (csi?.completed ?? 0) +
      pluginOps.filter((o) => o.status.phase === 'Completed').length;
    const finish = (b: Backup): boolean => {
      if (!ownedByOperations(b) || !FINALIZING.has(b.status?.phase ?? '')) return false;
      b.status = {
        ...b.status,
        phase: finalPhase(backup.status?.phase ?? '', errors.length + count(results.errors)),
        completionTimestamp: statusTime(now),
        errors: count(results.errors),
        warnings: count(results.warnings ?? {}),
        backupItemOperationsAttempted: Math.max(attempted, b.status?.backupItemOperationsAttempted ?? 0),
        backupItemOperationsCompleted: completed,
        backupItemOperationsFailed: attempted - completed,
        ...(csi?.attempted ? { csiVolumeSnapshotsAttempted: csi.attempted, csiVolumeSnapshotsCompleted: csi.completed } : {}),
        hookStatus: b.status?.hookStatus ?? { hooksAttempted: 0, hooksFailed: 0 },
      };
      return true;
    };
    // The stored copy first, then the Backup, as Velero writes them: whoever sees the final phase on the Backup finds
    // it in storage too, and a restart in between finalizes again (the Backup is still Finalizing).
    const ending = await backups.get(key.namespace, name);
    if (ending && finish(ending) && (ending.status?.phase === BackupPhase.Completed || ending.status?.phase === BackupPhase.PartiallyFailed)) {
      await store.putBackupMetadata(name, withTypeMeta(ending));
    }
    const final = await backups.updateStatus(key.namespace, name, finish);
    log.info({ backup: name, phase: final?.status?.phase, podVolumeBackups: pvbs.length, dataUploads: dus.length, csiSnapshots: csi?.attempted ?? 0, pluginOperations: pluginOps.length, failed: attempted - completed }, 'backup done');
  }

  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    if (key.namespace !== ctx.namespace) return;
    let backup: Backup | undefined;
    try {
      backup = await backups.get(key.namespace, key.name);
    } catch {
      return; // unreadable: the backup controller reports it
    }
    const next = operationsStep(backup);
    if (next.step === 'cancel') {
      // The cancel controller (./backup-cancel-controller.ts) takes the Canceling backup from here.
      const written = await backups.update(key.namespace, key.name, (b) => (ownedByOperations(b) ? beginCanceling(b) : false));
      if (written?.status?.phase === BackupPhase.Canceling) log.info({ backup: key.name }, 'backup canceled while waiting for its item operations');
      return;
    }
    if (next.step === 'track') return track(key, backup!);
    if (next.step === 'finalize') await finalize(key, backup!);
  };
}

/**
 * A watch of PVBs or DataUploads that wakes the Backup owning the one that changed. The owner of each object seen is
 * remembered, so a deleted one still wakes its backup.
 */
function startOwnerWaker<T extends KubernetesObject>(ctx: ServerContext, name: string, kind: ResourceKind, wake: (key: ObjectKey) => void): Promise<Stoppable> {
  const client = customClient<T>(ctx.kube, kind, (o) => o as T);
  const owners = new Map<string, string>();
  return startCustomController<T>(ctx, client, {
    name,
    reconcile: async (key) => {
      const obj = await client.get(key.namespace, key.name);
      const owner = obj?.metadata?.ownerReferences?.find((o) => o.kind === 'Backup' && o.controller)?.name ?? owners.get(key.name);
      if (obj && owner) owners.set(key.name, owner);
      else owners.delete(key.name);
      if (owner) wake({ namespace: key.namespace, name: owner });
    },
  });
}

/** The operations controller: Backups by watch and resync, plus PVB and DataUpload watches that wake the owning backup. */
export async function startBackupOperationsController(ctx: ServerContext): Promise<Stoppable> {
  const backups = customClient<Backup>(ctx.kube, Kinds.Backup, (o) => o as Backup);
  const controller = await startCustomController<Backup>(ctx, backups, {
    name: 'backup-operations',
    reconcile: backupOperationsReconciler(ctx),
    resyncMs: OPERATIONS_RESYNC_MS,
  });
  const wake = (key: ObjectKey) => controller.enqueue(key);
  const pvbWatch = await startOwnerWaker<PodVolumeBackup>(ctx, 'backup-operations-pvb', Kinds.PodVolumeBackup, wake);
  const duWatch = await startOwnerWaker<DataUpload>(ctx, 'backup-operations-du', Kinds.DataUpload, wake);
  return {
    async stop() {
      await duWatch.stop();
      await pvbWatch.stop();
      await controller.stop();
    },
  };
}
