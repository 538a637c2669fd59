/**
 * Carries out the cancel of Backups (docs/backup.md "Canceling a backup"; the decisions are ./cancel-decisions.ts).
 * It runs on a queue of its own, so a cancel is seen at once even while the backup controller's queue is busy with
 * a run:
 *   New, cancel asked        → Canceled (nothing was written);
 *   running in this process  → the run is stopped through its abort signal; it writes Canceling itself;
 *   run left by a stopped server → Canceling;
 *   Canceling                → `spec.cancel` on its unfinished PodVolumeBackups and DataUploads; once they have ended,
 *                              the post hooks still owed to its pods run, its item actions' asynchronous operations
 *                              still running are cancelled, its repository snapshots (of volumes done
 *                              before the cancel), VolumeSnapshots and everything under `backups/<name>/` in storage
 *                              are deleted, and the Backup ends Canceled.
 * Every step reads what is there now and is idempotent, so a server that stops while a backup is Canceling finishes
 * the cancel when it starts again.
 */
import { Kinds, Labels, parseBackupOperations, parsePodVolumeBackup, volumeOperationRunning, type Backup, type PodVolumeBackup } from '../../api/index.js';
import { customClient } from '../../kube/custom.js';
import { startCustomController, type ObjectKey, type ReconcileResult } from '../../kube/controller.js';
import { podExecutor } from '../../kube/pod-exec.js';
import { LocationResolver } from '../../storage/locations.js';
import type { ServerContext, Stoppable } from '../context.js';
import { cancelPodVolumeBackups } from '../podvolume/backup-cancel.js';
import { deletePodVolumeSnapshots } from '../podvolume/backup-snapshots.js';
import { cancelDataUploads, deleteMovedSnapshots, deleteSourceSnapshots, listDataUploads } from '../datamover/backup-cleanup.js';
import { cleanupCsiSnapshots } from '../csi/snapshot-cleanup.js';
import { deleteKeptCsiSnapshots } from '../csi/snapshot-delete.js';
import { runExecHooks } from '../hooks/hook-runner.js';
import { pendingPod, readPendingPostHooks, writePendingPostHooks } from '../hooks/pending-post-hooks.js';
import { CANCEL_POLL_MS, backupCancelStep, beginCanceling, cancelingStep, endCanceled } from './cancel-decisions.js';
import { runnerIdentity } from './run-claim.js';
import type { BackupStore } from '../../storage/backup-store.js';
import { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import { registerBuiltinBackupActions } from '../item-actions/builtin.js';
import { cancelPendingOperations, isPluginOperation } from '../plugin-operations.js';
import type { RunRegistry } from '../run-registry.js';
import { cancelRequestedAtMs } from '../cancel-lifecycle.js';
import { cancelReconciler } from '../cancel-reconciler.js';

export interface BackupCancelControllerOptions extends ServerContext {
  /** The runs of this process (shared with the backup controller). */
  runs: RunRegistry;
  claimStaleAfterMs?: number;
}

/** The status message of a PodVolumeBackup or DataUpload stopped because its backup is canceled. */
export function canceledBackupMessage(kind: string, phase: string): string {
  return `${kind} is in status "${phase}" and its backup is canceled, mark it as cancel`;
}

export function backupCancelReconciler(opts: BackupCancelControllerOptions) {
  // Unvalidated reads: a New backup with a malformed spec can still be canceled.
  const backups = customClient<Backup>(opts.kube, Kinds.Backup, (o) => o as Backup);
  const pvbClient = customClient<PodVolumeBackup>(opts.kube, Kinds.PodVolumeBackup, parsePodVolumeBackup);
  const locations = new LocationResolver(opts.kube, opts.namespace, opts.plugins?.locations);
  const log = opts.logger.child({ controller: 'backup-cancel' });
  const exec = podExecutor(opts.kube);
  const me = runnerIdentity();

  const stepOf = (b: Backup) =>
    backupCancelStep(b, {
      runningHere: opts.runs.has(b.metadata?.name ?? ''),
      me,
      nowMs: opts.now().getTime(),
      ...(opts.claimStaleAfterMs !== undefined ? { claimStaleAfterMs: opts.claimStaleAfterMs } : {}),
    });

  /** Post hooks the backup still owes its pods (their pre hooks ran): run now, whatever became of the volumes. */
  async function runOwedPostHooks(key: ObjectKey, backup: Backup): Promise<void> {
    const pending = readPendingPostHooks(backup.metadata?.annotations);
    if (!pending.length) return;
    for (const entry of pending) {
      await runExecHooks({ pod: pendingPod(entry), phase: 'post', hooks: entry.hooks, exec, log: log.child({ backup: key.name }) });
    }
    await backups.update(key.namespace, key.name, (b) => {
      if (!readPendingPostHooks(b.metadata?.annotations).length) return false;
      b.metadata = b.metadata ?? {};
      b.metadata.annotations = { ...b.metadata.annotations };
      writePendingPostHooks(b.metadata.annotations, []);
    });
    log.info({ backup: key.name, pods: pending.map((p) => `${p.namespace}/${p.pod}`) }, 'ran the post hooks of the pods of a canceled backup');
  }

  const builtinActions = registerBuiltinBackupActions(new ItemActionRegistry());

  /** The asynchronous operations item actions started for the backup, still running: each plugin asked to cancel. */
  async function cancelPluginOperations(key: ObjectKey, backup: Backup, store: BackupStore): Promise<void> {
    const stored = await store.getBackupJson(key.name, 'itemOperations');
    const operations = stored === undefined || stored === null ? [] : parseBackupOperations(stored).filter(isPluginOperation);
    if (!operations.length) return;
    const session = opts.plugins?.session([log.child({ backup: key.name })]);
    try {
      await cancelPendingOperations({
        operations,
        owner: backup,
        actionFor: async (name) => (opts.plugins && session ? opts.plugins.backupAction(session, name, builtinActions) : builtinActions.backupAction(name)),
        log: log.child({ backup: key.name }),
      });
    } finally {
      await session?.close();
    }
  }

  /** Canceling: stop the volume operations, wait for them, delete what the backup wrote, Canceled. */
  async function cancel(key: ObjectKey, backup: Backup): Promise<ReconcileResult | void> {
    const uid = backup.metadata?.uid ?? '';
    if (uid) {
      await cancelPodVolumeBackups({ kube: opts.kube, namespace: opts.namespace, backupUid: uid, log, message: (phase) => canceledBackupMessage('PVB', phase) });
      await cancelDataUploads({ kube: opts.kube, namespace: opts.namespace, backupUid: uid, log, message: (du) => canceledBackupMessage('DataUpload', du.status?.phase || 'New') });
    }
    const pvbs = uid ? await pvbClient.list(opts.namespace, `${Labels.BackupUID}=${uid}`) : [];
    const dus = await listDataUploads(opts.kube, opts.namespace, uid);
    const running = { podVolumeBackupsRunning: pvbs.filter(volumeOperationRunning).length, dataUploadsRunning: dus.filter(volumeOperationRunning).length };
    const next = cancelingStep(running, { requestedAtMs: cancelRequestedAtMs(backup), nowMs: opts.now().getTime() });
    if (next.step === 'wait') return { requeueAfterMs: next.requeueAfterMs };
    if (next.gaveUp) log.warn({ backup: key.name, ...running }, 'the canceled backup waited too long for its volume operations to stop; cleaning up without them');

    await runOwedPostHooks(key, backup);
    const locationName = backup.spec?.storageLocation ?? opts.config.defaultBackupLocation;
    const resolved = await locations.resolve(locationName);
    const store = resolved?.store;
    const parsed = { ...backup, metadata: backup.metadata ?? {}, spec: backup.spec ?? {} } as Backup;
    // Before the files go: the operations are listed in them.
    if (store) await cancelPluginOperations(key, parsed, store);
    // Volume data first (the backup's files, while there, name snapshots too), then the files themselves.
    const podVolumes = await deletePodVolumeSnapshots({ kube: opts.kube, namespace: opts.namespace, backup: parsed, store, log });
    const moved = await deleteMovedSnapshots({ kube: opts.kube, namespace: opts.namespace, backup: parsed, store, log });
    await deleteSourceSnapshots({ kube: opts.kube, dataUploads: dus, log });
    await cleanupCsiSnapshots({ kube: opts.kube, backupUid: uid, log });
    const kept = store ? await deleteKeptCsiSnapshots({ kube: opts.kube, namespace: opts.namespace, backup: parsed, store, log, timeoutMs: opts.config.resourceTimeoutMs }) : { errors: [] };
    const errors = [...podVolumes.errors, ...moved.errors, ...kept.errors];
    // Retried by the work queue: a Canceled backup leaves nothing behind.
    if (errors.length) throw new Error(`cleaning up canceled backup ${key.name}: ${errors.join('; ')}`);
    const objects = store ? await store.deleteBackup(key.name) : 0;
    if (!resolved) log.warn({ backup: key.name, location: locationName }, 'the storage location of the canceled backup is gone; no files deleted from it');
    await backups.update(key.namespace, key.name, (b) => endCanceled(b, opts.now()));
    log.info({ backup: key.name, podVolumeSnapshots: podVolumes.deleted, movedSnapshots: moved.deleted, objects }, 'backup canceled');
  }

  return cancelReconciler({
    kind: 'backup',
    namespace: opts.namespace,
    client: backups,
    log,
    stepOf,
    beginCanceling,
    endCanceled: (b) => endCanceled(b, opts.now()),
    abortRun: (key) => opts.runs.cancel(key.name),
    abortRequeueMs: CANCEL_POLL_MS * 5,
    cancel,
    ownStep(key, next) {
      // 'operations': the operations controller writes Canceling on its own queue.
      if (next.step !== 'wait-for-runner') return;
      log.info({ backup: key.name, runner: next.runner }, 'a canceled backup is run by another server process, which stops it');
      return { requeueAfterMs: next.retryInMs };
    },
  });
}

export async function startBackupCancelController(opts: BackupCancelControllerOptions): Promise<Stoppable> {
  const client = customClient<Backup>(opts.kube, Kinds.Backup, (o) => o as Backup);
  const controller = await startCustomController<Backup>(opts, client, {
    name: 'backup-cancel',
    reconcile: backupCancelReconciler(opts),
  });
  return { stop: () => controller.stop() };
}
