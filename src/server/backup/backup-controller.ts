/**
 * The Backup controller. For each Backup in the install namespace:
 *   '' / New        → validate; FailedValidation with every reason, or InProgress with the defaults filled in;
 *   InProgress      → (re)run the backup: items (creating PodVolumeBackups for pods' fs-backup volumes) → archive →
 *                     Finalizing → upload → Completed | PartiallyFailed, or Failed with the reason (storage
 *                     unreachable, discovery impossible...). With PodVolumeBackups the items are uploaded with
 *                     WaitingForPluginOperations* instead, and ./backup-operations-controller.ts finishes the backup
 *                     on its own queue, so the next backup starts meanwhile;
 *   Finalizing*     → left by a server that stopped mid-upload: run again from the start (unless it has PVBs: then
 *                     the operations controller owns it);
 *   anything else   → nothing to do.
 * A run found InProgress that this process is not running belongs to a server that stopped: it is run again from
 * scratch (collection is idempotent, PVBs of the earlier run are reused, the upload replaces the objects), at most
 * MAX_ATTEMPTS times, then Failed; a Failed backup's unfinished PVBs are canceled.
 * While a process runs a backup it keeps a heartbeat on it (./run-claim.ts), so an overlapping server process
 * (rolling update) waits instead of starting a second run.
 * A backup asked to be canceled is not run; a run of this process stopped for a cancel (../run-registry.ts), or
 * reaching an end while a cancel is asked, writes Canceling instead of its phase, and ./backup-cancel-controller.ts
 * takes it from there (./cancel-decisions.ts).
 */
import { BackupPhase, Kinds, isCancelRequested, parseBackup, statusTime, type Backup } from '../../api/index.js';
import { customClient, type CustomClient } from '../../kube/custom.js';
import { startCustomController, type ObjectKey, type ReconcileResult } from '../../kube/controller.js';
import { registerBuiltinBackupActions } from '../item-actions/builtin.js';
import { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import type { ServerContext, Stoppable } from '../context.js';
import { LocationResolver } from '../../storage/locations.js';
import { apiReader } from './api-reader.js';
import { createBackupLog } from './backup-log.js';
import { BackupAbortedError, type BackupProgressUpdate } from './backupper.js';
import { BackupStorageError, runBackup, type RunBackupOutcome } from './run-backup.js';
import { HEARTBEAT_INTERVAL_MS, RUNNER_ANNOTATION, claimAnnotations, releaseClaim, runnerIdentity } from './run-claim.js';
import { ATTEMPTS_ANNOTATION, MAX_ATTEMPTS, backupStep, mustRun, runStep, startBackup } from './backup-decisions.js';
import { throttledWriter } from '../../base/throttle.js';
import { scratchDir } from './scratch-dir.js';
import { backupValidationErrors } from './validation.js';
import { PodVolumeBackupCreator } from '../podvolume/backup-creator.js';
import { backupFailedCancelMessage, cancelPodVolumeBackups, serverStartCancelMessage } from '../podvolume/backup-cancel.js';
import { startBackupOperationsController } from './backup-operations-controller.js';
import { UPLOADING_ANNOTATION } from './operations-decisions.js';
import { VolumeSnapshotCreator } from '../datamover/backup-creator.js';
import { cleanupCsiSnapshots } from '../csi/snapshot-cleanup.js';
import { loadResourcePolicies } from './resource-policies-load.js';
import { anyPolicySnapshots, matchVolumePolicy, persistentVolumeFacts } from './volume-policies.js';
import { cancelDataUploads, deleteSourceSnapshots, listDataUploads } from '../datamover/backup-cleanup.js';
import { podExecutor } from '../../kube/pod-exec.js';
import { PENDING_POST_HOOKS_ANNOTATION, readPendingPostHooks, writePendingPostHooks } from '../hooks/pending-post-hooks.js';
import { tarballSizeEffects } from '../metrics/metrics-decisions.js';
import { beginCanceling } from './cancel-decisions.js';
import { CanceledError, RunRegistry } from '../run-registry.js';
import { startBackupCancelController } from './backup-cancel-controller.js';
import { collectAllGarbage } from '../../datapath/heap-tuning.js';

function isWaitingPhase(phase: string): phase is typeof BackupPhase.WaitingForPluginOperations | typeof BackupPhase.WaitingForPluginOperationsPartiallyFailed {
  return phase === BackupPhase.WaitingForPluginOperations || phase === BackupPhase.WaitingForPluginOperationsPartiallyFailed;
}

/** Progress is written at most this often. */
export const PROGRESS_INTERVAL_MS = 1000;

export interface BackupControllerOptions extends ServerContext {
  registry?: ItemActionRegistry;
  tmpDir?: string;
  /** How old another process's heartbeat must be before its backup is taken over (tests shorten it). */
  claimStaleAfterMs?: number;
  /** The runs of this process, shared with the cancel controller (default: a registry of its own). */
  runs?: RunRegistry;
}

export function backupReconciler(opts: BackupControllerOptions & { signal?: AbortSignal }) {
  const strict = customClient<Backup>(opts.kube, Kinds.Backup, parseBackup);
  // Reads a Backup without validation, so one with a malformed spec can still be marked FailedValidation.
  const lenient = customClient<Backup>(opts.kube, Kinds.Backup, (o) => o as Backup);
  const locations = new LocationResolver(opts.kube, opts.namespace, opts.plugins?.locations);
  const registry = opts.registry ?? registerBuiltinBackupActions(new ItemActionRegistry());
  const api = apiReader(opts.kube);
  const runs = opts.runs ?? new RunRegistry();
  /** Backups this process moved to InProgress: any other InProgress one was left by a server that stopped. */
  const startedHere = new Set<string>();
  const me = runnerIdentity();

  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    if (key.namespace !== opts.namespace) return;
    const raw = await lenient.get(key.namespace, key.name);
    if (!raw) return;
    const next = backupStep(raw, { running: runs.has(key.name) });
    if (next.step === 'validate') return validateAndStart(key, raw);
    if (next.step === 'run') return run(key);
  };

  async function validateAndStart(key: ObjectKey, raw: Backup): Promise<void> {
    let backup: Backup;
    try {
      backup = parseBackup(raw);
    } catch (err) {
      await failValidation(lenient, key, [(err as Error).message]);
      return;
    }
    const spec = backup.spec ?? {};
    const fromSpec = Boolean(spec.storageLocation);
    const location = fromSpec ? await locations.get(spec.storageLocation as string) : await locations.defaultLocation(opts.config.defaultBackupLocation);
    const locationName = fromSpec ? (spec.storageLocation as string) : (location?.metadata.name ?? opts.config.defaultBackupLocation);
    const errors = backupValidationErrors({ backup, location, locationName, locationFromSpec: fromSpec });
    const policies = await loadResourcePolicies(opts.kube, backup);
    if (policies.problem) errors.push(policies.problem);
    if (errors.length > 0) {
      opts.logger.info({ backup: key.name, errors }, 'backup failed validation');
      await failValidation(strict, key, errors);
      return;
    }
    const k8s = await opts.kube.version.getCode().catch(() => undefined);
    const start = { locationName, k8s, now: opts.now(), config: opts.config };
    await strict.update(key.namespace, key.name, (b) => startBackup(b, start));
    startedHere.add(key.name);
    // The update's watch event brings the key back: the run happens in its own reconcile.
  }

  async function run(key: ObjectKey): Promise<ReconcileResult | void> {
    let backup: Backup | undefined;
    try {
      backup = await strict.get(key.namespace, key.name);
    } catch (err) {
      await markFailed(key, `backup spec cannot be read: ${(err as Error).message}`);
      return;
    }
    if (!backup || !mustRun(backup)) return;

    const next = runStep(backup, { me, nowMs: opts.now().getTime(), ...(opts.claimStaleAfterMs !== undefined ? { claimStaleAfterMs: opts.claimStaleAfterMs } : {}), startedHere: startedHere.has(key.name) });
    if (next.step === 'wait') {
      opts.logger.info({ backup: key.name, runner: next.runner }, 'backup is being run by another server process; waiting for it');
      return { requeueAfterMs: next.retryInMs };
    }
    if (next.step === 'give-up') {
      await markFailed(key, `the server stopped ${MAX_ATTEMPTS} times while running this backup; giving up`, serverStartCancelMessage);
      return;
    }
    const { attempts, restarted } = next;
    startedHere.delete(key.name);
    // Pods whose pre hook ran in a run that did not finish: their post hooks run first in this one.
    const leftoverPostHooks = readPendingPostHooks(backup.metadata?.annotations);
    // Registered before the claim is written, so a cancel seen from now on stops this run.
    const thisRun = runs.start(key.name, opts.signal);
    let claimed = false;
    try {
      backup = await strict.update(key.namespace, key.name, (b) => {
        claimed = false;
        if (isCancelRequested(b) || !mustRun(b)) return false;
        claimed = true;
        b.metadata = b.metadata ?? {};
        b.metadata.annotations = { ...b.metadata.annotations, [ATTEMPTS_ANNOTATION]: String(attempts), ...claimAnnotations(me, opts.now()) };
        delete b.metadata.annotations[UPLOADING_ANNOTATION];
        b.status = { ...b.status, phase: BackupPhase.InProgress, progress: {} };
        delete b.status.completionTimestamp;
        delete b.status.hookStatus;
        // Counted again by this run (its PVBs are found again).
        delete b.status.backupItemOperationsAttempted;
        delete b.status.backupItemOperationsCompleted;
        delete b.status.backupItemOperationsFailed;
      });
    } catch (err) {
      runs.end(key.name);
      throw err;
    }
    if (!backup || !claimed) {
      runs.end(key.name);
      return;
    }
    const signal = thisRun.signal;
    const backupLog = createBackupLog({ backup: `${key.namespace}/${key.name}`, server: opts.logger });
    if (restarted) backupLog.logger.info({ attempt: attempts }, 'The server stopped while this backup was running; running it again from the start');
    const progress = throttledWriter<BackupProgressUpdate>({
      intervalMs: PROGRESS_INTERVAL_MS,
      write: (p) =>
        strict.updateStatus(key.namespace, key.name, (b) => {
          if (b.status?.phase !== BackupPhase.InProgress) return false;
          b.status = { ...b.status, progress: { ...p } };
        }),
      onError: (err) => opts.logger.warn({ backup: key.name, err: (err as Error).message }, 'could not write backup progress'),
    });
    const heartbeat = setInterval(() => {
      strict
        .update(key.namespace, key.name, (b) => {
          if (b.metadata?.annotations?.[RUNNER_ANNOTATION] !== me) return false;
          b.metadata.annotations = { ...b.metadata.annotations, ...claimAnnotations(me, opts.now()) };
        })
        .catch((err: unknown) => opts.logger.warn({ backup: key.name, err: (err as Error).message }, 'could not record the backup heartbeat'));
    }, HEARTBEAT_INTERVAL_MS);
    heartbeat.unref();
    // The backup's own plugin processes (as Velero's per-backup plugin manager): their log lines go to its log too.
    const session = opts.plugins?.session([backupLog.logger, opts.logger.child({ backup: key.name })]);
    try {
      const storageLocation = backup.spec?.storageLocation ?? opts.config.defaultBackupLocation;
      const located = await locations.resolve(storageLocation);
      if (!located) throw new StorageError(`backup storage location ${storageLocation} no longer exists`);
      const resolved = session && locations.servedByPlugin(located.location) ? { ...located, store: await locations.openIn(located.location, session) } : located;
      const actions = session && opts.plugins ? await opts.plugins.actionsFor(session, registry, new Set(['backup', 'itemBlock'] as const)) : registry;
      // Read again for this run: validation read them, but the run may come after a restart.
      const loaded = await loadResourcePolicies(opts.kube, backup);
      if (loaded.problem) throw new PolicyError(loaded.problem);
      const policies = loaded.policies;
      if (policies) backupLog.logger.info({ resourcePolicies: policies.source, volumePolicies: policies.volumePolicies.length, includeExcludePolicy: Boolean(policies.includeExcludePolicy) }, 'Using resource policies');
      const podVolumes = new PodVolumeBackupCreator({ kube: opts.kube, namespace: opts.namespace, backup, policies, signal });
      const volumeSnapshots = new VolumeSnapshotCreator({
        kube: opts.kube,
        namespace: opts.namespace,
        backup,
        signal,
        ...(policies?.volumePolicies.length ? { policyFor: (claim, pv) => matchVolumePolicy(policies, persistentVolumeFacts(pv, { metadata: { labels: claim.labels ?? {} }, status: { phase: claim.phase } })) } : {}),
        policiesMaySnapshot: anyPolicySnapshots(policies),
      });
      const outcome = await runBackup({
        kube: opts.kube,
        api,
        backup,
        store: resolved.store,
        registry: actions,
        log: backupLog.logger,
        logText: backupLog.text,
        onProgress: (p) => progress.report(p),
        onFinalizing: async (s) => {
          await progress.stop();
          let canceled = false;
          const written = await strict.updateStatus(key.namespace, key.name, (b) => {
            canceled = isCancelRequested(b);
            // Canceled before its files were put: the upload does not start.
            if (canceled) return false;
            b.status = { ...b.status, phase: s.phase, warnings: s.warnings, errors: s.errors, progress: s.progress, hookStatus: { hooksAttempted: s.hooks.attempted, hooksFailed: s.hooks.failed } };
            if (s.itemOperations > 0) {
              // Until the upload is done the backup stays this controller's: a server dying mid-upload leaves it
              // to be run again, not finalized without its tarball.
              b.metadata = b.metadata ?? {};
              b.metadata.annotations = { ...b.metadata.annotations, [UPLOADING_ANNOTATION]: 'true' };
              b.status.backupItemOperationsAttempted = s.itemOperations;
              b.status.backupItemOperationsCompleted = 0;
              b.status.backupItemOperationsFailed = 0;
            }
          });
          if (canceled) throw new CanceledError(`backup ${key.name}`);
          return written ?? (backup as Backup);
        },
        signal,
        tmpDir: opts.tmpDir ?? scratchDir(),
        now: opts.now,
        podVolumes,
        volumeSnapshots,
        ...(policies?.includeExcludePolicy ? { includeExcludePolicy: policies.includeExcludePolicy } : {}),
        exec: podExecutor(opts.kube),
        leftoverPostHooks,
        onPendingPostHooks: async (pending) => {
          await strict.update(key.namespace, key.name, (b) => {
            const before = b.metadata?.annotations?.[PENDING_POST_HOOKS_ANNOTATION];
            b.metadata = b.metadata ?? {};
            b.metadata.annotations = { ...b.metadata.annotations };
            writePendingPostHooks(b.metadata.annotations, pending);
            if (before === b.metadata.annotations[PENDING_POST_HOOKS_ANNOTATION]) return false;
          });
        },
      });
      // As Velero, the tarball's size is recorded when it is written (the Backup's status does not carry it).
      opts.metrics?.apply(tarballSizeEffects(backup, outcome.archiveBytes));
      if (isWaitingPhase(outcome.phase)) {
        // The items are stored; the operations controller waits for the PodVolumeBackups and completes the backup.
        const waiting = await strict.update(key.namespace, key.name, (b) => {
          if (isCancelRequested(b)) return beginCanceling(b);
          b.status = { ...b.status, ...outcomeStatus(outcome), backupItemOperationsAttempted: outcome.itemOperations };
          if (b.metadata?.annotations) delete b.metadata.annotations[ATTEMPTS_ANNOTATION];
          if (b.metadata?.annotations) delete b.metadata.annotations[UPLOADING_ANNOTATION];
          releaseClaim(b.metadata?.annotations);
        });
        if (waiting?.status?.phase === BackupPhase.Canceling) {
          opts.logger.info({ backup: key.name }, 'backup items done, but the backup is canceled');
          return;
        }
        opts.logger.info({ backup: key.name, phase: outcome.phase, itemOperations: outcome.itemOperations }, 'backup items done; waiting for pod volume backups and data uploads');
        return;
      }
      const completionTimestamp = statusTime(opts.now());
      const finish = (b: Backup): boolean | void => {
        if (isCancelRequested(b)) return beginCanceling(b);
        b.status = { ...b.status, ...outcomeStatus(outcome), completionTimestamp };
        if (b.metadata?.annotations) delete b.metadata.annotations[ATTEMPTS_ANNOTATION];
        releaseClaim(b.metadata?.annotations);
      };
      // velero-backup.json was put with Finalizing; it is put again with the final phase before the Backup shows it
      // (as Velero's finalizer does), so whoever sees the phase on the Backup finds it in storage too. A cancel asked
      // in between still wins: the Backup goes Canceling and its files are deleted.
      const ending = await strict.get(key.namespace, key.name);
      if (ending && !isCancelRequested(ending)) {
        finish(ending);
        await resolved.store.putBackupMetadata(key.name, { ...ending, apiVersion: 'velero.io/v1', kind: 'Backup' });
      }
      const final = await strict.updateStatus(key.namespace, key.name, finish);
      if (final?.status?.phase === BackupPhase.Canceling) {
        opts.logger.info({ backup: key.name }, 'backup uploaded, but it is canceled: its files are deleted');
        return;
      }
      opts.logger.info({ backup: key.name, phase: outcome.phase, items: outcome.progress.itemsBackedUp, warnings: outcome.warnings, errors: outcome.errors }, 'backup done');
    } catch (err) {
      await progress.stop();
      if (thisRun.canceled || err instanceof CanceledError) {
        clearInterval(heartbeat);
        await strict.update(key.namespace, key.name, beginCanceling);
        opts.logger.info({ backup: key.name }, 'backup run stopped: the backup is canceled');
        return;
      }
      if (err instanceof BackupAbortedError || opts.signal?.aborted) {
        // Left InProgress on purpose, released so the next server runs it again at once.
        clearInterval(heartbeat);
        await strict.update(key.namespace, key.name, (b) => releaseClaim(b.metadata?.annotations)).catch(() => undefined);
        opts.logger.info({ backup: key.name }, 'backup interrupted by server shutdown; it will run again when the server starts');
        return;
      }
      const reason = failureReason(err);
      opts.logger.error({ backup: key.name, reason }, 'backup failed');
      await markFailed(key, reason);
    } finally {
      clearInterval(heartbeat);
      runs.end(key.name);
      await session?.close().catch((err: unknown) => opts.logger.warn({ backup: key.name, err: (err as Error).message }, 'could not stop the backup plugin processes'));
      // What the run held goes back to the system while the server waits for the next one.
      collectAllGarbage();
    }
  }

  async function markFailed(key: ObjectKey, reason: string, cancelMessage: (phase: string) => string = backupFailedCancelMessage): Promise<void> {
    const failed = await lenient.updateStatus(key.namespace, key.name, (b) => {
      // Asked to be canceled: it ends Canceled, cleaned up by the cancel controller, rather than Failed.
      if (isCancelRequested(b)) return beginCanceling(b);
      b.status = { ...b.status, phase: BackupPhase.Failed, failureReason: reason, completionTimestamp: statusTime(opts.now()) };
      if (b.metadata?.annotations) delete b.metadata.annotations[ATTEMPTS_ANNOTATION];
      if (b.metadata?.annotations) delete b.metadata.annotations[UPLOADING_ANNOTATION];
      releaseClaim(b.metadata?.annotations);
    });
    // Nobody waits for this backup's pod volume backups any more: the node agents stop them.
    const uid = failed?.metadata?.uid;
    if (uid && failed?.status?.phase === BackupPhase.Failed) {
      await cancelPodVolumeBackups({ kube: opts.kube, namespace: opts.namespace, backupUid: uid, log: opts.logger, message: cancelMessage }).catch((err: unknown) =>
        opts.logger.warn({ backup: key.name, err: (err as Error).message }, 'could not cancel the pod volume backups of a failed backup'),
      );
      // Its data uploads too; their source snapshots are not needed any more.
      try {
        await cancelDataUploads({ kube: opts.kube, namespace: opts.namespace, backupUid: uid, log: opts.logger, message: (du) => cancelMessage(du.status?.phase || 'New').replace(/^PVB/, 'DataUpload') });
        await deleteSourceSnapshots({ kube: opts.kube, dataUploads: await listDataUploads(opts.kube, opts.namespace, uid), log: opts.logger });
      } catch (err) {
        opts.logger.warn({ backup: key.name, err: (err as Error).message }, 'could not cancel the data uploads of a failed backup');
      }
      // Its kept CSI snapshots are not part of any backup: deleted with the storage's snapshot.
      if (failed?.spec?.snapshotMoveData !== true) {
        await cleanupCsiSnapshots({ kube: opts.kube, backupUid: uid, log: opts.logger }).catch((err: unknown) =>
          opts.logger.warn({ backup: key.name, err: (err as Error).message }, 'could not delete the CSI snapshots of a failed backup'),
        );
      }
    }
  }
}

/** The status a run's outcome records, whether the backup then waits for its operations or ends. */
function outcomeStatus(outcome: RunBackupOutcome): Pick<NonNullable<Backup['status']>, 'phase' | 'warnings' | 'errors' | 'progress' | 'hookStatus'> {
  return {
    phase: outcome.phase,
    warnings: outcome.warnings,
    errors: outcome.errors,
    progress: outcome.progress,
    hookStatus: { hooksAttempted: outcome.hooks.attempted, hooksFailed: outcome.hooks.failed },
  };
}

async function failValidation(client: CustomClient<Backup>, key: ObjectKey, errors: string[]): Promise<void> {
  await client.updateStatus(key.namespace, key.name, (b) => {
    if ((b.status?.phase ?? '') !== '' && b.status?.phase !== BackupPhase.New) return false;
    b.status = { ...b.status, phase: BackupPhase.FailedValidation, validationErrors: errors };
  });
}

class StorageError extends BackupStorageError {}

/** The resource policies cannot be used any more (changed or deleted since validation): the run fails with that. */
class PolicyError extends Error {}

function failureReason(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  return err instanceof BackupStorageError ? message : `backup failed: ${message}`;
}

export async function startBackupController(ctx: ServerContext): Promise<Stoppable> {
  return startBackupControllerWith(ctx);
}

/** Same as startBackupController with test hooks (registry, temp directory). */
export async function startBackupControllerWith(opts: BackupControllerOptions): Promise<Stoppable> {
  const client = customClient<Backup>(opts.kube, Kinds.Backup, (o) => o as Backup);
  const abort = new AbortController();
  const runs = opts.runs ?? new RunRegistry();
  const operations = await startBackupOperationsController(opts);
  const cancel = await startBackupCancelController({ ...opts, runs });
  const controller = await startCustomController<Backup>(opts, client, {
    name: 'backup',
    reconcile: backupReconciler({ ...opts, runs, signal: abort.signal }),
  });
  return {
    async stop() {
      abort.abort();
      await controller.stop();
      await cancel.stop();
      await operations.stop();
    },
  };
}
