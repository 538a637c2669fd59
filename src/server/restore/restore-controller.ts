/**
 * The Restore controller: New → FailedValidation (every reason listed) or InProgress → Completed | PartiallyFailed
 * | Failed. The work itself (download, read, restore items) is in ./restore-run.ts; this file only decides, from
 * the Restore as observed, which step comes next. A Restore found InProgress that this process is not running was
 * interrupted by a server restart: it is run again (restoring is idempotent: objects this restore already
 * created are recognised by their restore label), at most MAX_ATTEMPTS times, then failed with the reason.
 * A restore that started PodVolumeRestores (fs-backup data) or DataDownloads (data-mover data) goes InProgress →
 * WaitingForPluginOperations(PartiallyFailed) → Finalizing(PartiallyFailed) → Completed | PartiallyFailed instead
 * (./restore-finalize.ts); those phases are resumed from the PVRs and DataDownloads after a restart.
 * A restore asked to be canceled is left to ./restore-cancel-controller.ts; a run of this process stopped for a cancel
 * (through the abort signal it registered in the shared RunRegistry), or ending while a cancel is asked, writes
 * Canceling instead of its phase.
 */
import {
  parseDuration,
  BackupPhase,
  Finalizers,
  Kinds,
  Labels,
  labelValue,
  selectorFor,
  RestorePhase,
  parseBackup,
  parseRestore,
  type Backup,
  type PodVolumeRestore,
  type Restore,
  isCancelRequested,
  statusTime,
  type HookStatus,
  ValidationError,
} from '../../api/index.js';
import { podExecutor } from '../../kube/pod-exec.js';
import { advanceRestoreExecHooks, readPendingRestoreHooks, writePendingRestoreHooks } from '../hooks/restore-exec-step.js';
import { customClient, type CustomClient } from '../../kube/custom.js';
import { keyString, startCustomController, type ObjectKey, type ReconcileResult } from '../../kube/controller.js';
import { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import { registerBuiltinRestoreActions } from '../item-actions/builtin.js';
import type { ServerContext, Stoppable } from '../context.js';
import { LocationResolver } from '../../storage/locations.js';
import { DynamicClient } from './dynamic-client.js';
import { finalizeRestoreFiles, waitForOperations } from './restore-finalize.js';
import { executeRestore } from './restore-run.js';
import { backupOfSchedule, restoreSpecProblems, validateRestore } from './validate.js';
import { loadResourceModifiers } from './resource-modifiers-load.js';
import {
  ATTEMPTS_ANNOTATION,
  FINALIZING,
  TERMINAL,
  WAITING,
  attemptStep,
  phaseAfterFinalize,
  phaseAfterWait,
  restoreStep,
  startRestore,
} from './restore-decisions.js';
import { beginRestoreCanceling } from './cancel-decisions.js';
import { startRestoreCancelController } from './restore-cancel-controller.js';
import { RunRegistry } from '../run-registry.js';
import { collectAllGarbage } from '../../datapath/heap-tuning.js';

/** How often a restore waiting for pod volume restores looks at them again. */
export const POD_VOLUME_POLL_MS = 2000;

/**
 * The hook counts a finished restore carries, as Velero's finalizer always sets them (whatever ran hooks wrote
 * before; zero counts are left out, as Go's omitempty does, so a restore without hooks has `hookStatus: {}` and
 * `restore describe` prints `HooksAttempted: 0` / `HooksFailed: 0`).
 */
export function finishedHookStatus(current: HookStatus | null | undefined): HookStatus {
  const attempted = current?.hooksAttempted ?? 0;
  const failed = current?.hooksFailed ?? 0;
  return { ...(attempted ? { hooksAttempted: attempted } : {}), ...(failed ? { hooksFailed: failed } : {}) };
}

export interface RestoreControllerOptions extends ServerContext {
  registry?: ItemActionRegistry;
  /** How long a PodVolumeRestore may wait for its pod to be scheduled on a node with a node agent (default: resourceTimeout). */
  nodeAgentWaitMs?: number;
  pollMs?: number;
  /** The runs of this process, shared with the cancel controller (default: a registry of its own). */
  runs?: RunRegistry;
}

export function restoreReconciler(opts: RestoreControllerOptions) {
  const restores = customClient<Restore>(opts.kube, Kinds.Restore, parseRestore);
  const lenient = customClient<Restore>(opts.kube, Kinds.Restore, (o) => o as Restore);
  const backups = customClient<Backup>(opts.kube, Kinds.Backup, parseBackup);
  const locations = new LocationResolver(opts.kube, opts.namespace, opts.plugins?.locations);
  const registry = opts.registry ?? registerBuiltinRestoreActions(new ItemActionRegistry());
  const client = new DynamicClient(opts.kube);
  const runs = opts.runs ?? new RunRegistry();
  const log = opts.logger.child({ controller: 'restore' });
  const exec = podExecutor(opts.kube);

  async function failValidation(key: ObjectKey, problems: string[]): Promise<void> {
    log.info({ restore: key.name, problems }, 'restore failed validation');
    // Written through an unvalidated read: a Restore whose spec does not parse must still be marked.
    await lenient.updateStatus(key.namespace, key.name, (r) => {
      if ((r.status?.phase ?? RestorePhase.New) !== RestorePhase.New) return false;
      r.status = { ...(r.status ?? {}), phase: RestorePhase.FailedValidation, validationErrors: problems };
    });
  }

  async function markFailed(key: ObjectKey, reason: string): Promise<void> {
    await restores.updateStatus(key.namespace, key.name, (r) => {
      if (TERMINAL.has(r.status?.phase ?? '')) return false;
      r.status = { ...(r.status ?? {}), phase: RestorePhase.Failed, failureReason: reason, completionTimestamp: statusTime(opts.now()) };
    });
  }

  /** Counts this attempt on the Restore; false when it has been interrupted too often. */
  async function countAttempt(key: ObjectKey): Promise<number> {
    let attempts = 0;
    await restores.update(key.namespace, key.name, (r) => {
      attempts = Number(r.metadata.annotations?.[ATTEMPTS_ANNOTATION] ?? '0') + 1;
      r.metadata.annotations = { ...(r.metadata.annotations ?? {}), [ATTEMPTS_ANNOTATION]: String(attempts) };
      const fin = r.metadata.finalizers ?? [];
      if (!fin.includes(Finalizers.RestoreExternalResources)) r.metadata.finalizers = [...fin, Finalizers.RestoreExternalResources];
    });
    return attempts;
  }

  async function removeFiles(restore: Restore, key: ObjectKey): Promise<void> {
    const backup = restore.spec.backupName ? await backups.get(key.namespace, restore.spec.backupName) : undefined;
    const locName = backup?.spec.storageLocation;
    const resolved = locName ? await locations.resolve(locName).catch(() => undefined) : undefined;
    if (resolved) {
      try {
        await resolved.store.deleteRestore(key.name);
      } catch (err) {
        log.warn({ restore: key.name, err: (err as Error).message }, 'could not delete the restore files from storage');
      }
    }
    await restores.update(key.namespace, key.name, (r) => {
      const fin = r.metadata.finalizers ?? [];
      if (!fin.includes(Finalizers.RestoreExternalResources)) return false;
      r.metadata.finalizers = fin.filter((f) => f !== Finalizers.RestoreExternalResources);
    });
  }

  function operationTimeoutMs(restore: Restore): number {
    const t = restore.spec.itemOperationTimeout;
    const ms = t ? parseDuration(t) : 0;
    return ms > 0 ? ms : opts.config.defaultItemOperationTimeoutMs;
  }

  function waitState(restore: Restore) {
    return waitForOperations({
      kube: opts.kube,
      namespace: restore.metadata.namespace ?? '',
      restore,
      now: opts.now(),
      nodeAgentWaitMs: opts.nodeAgentWaitMs ?? opts.config.resourceTimeoutMs,
      operationTimeoutMs: operationTimeoutMs(restore),
      log,
    });
  }

  /** Exec hooks of restored pods whose containers are up run (or fail) now; how many containers still wait. */
  async function hooksStep(restore: Restore, podVolumeRestores: readonly PodVolumeRestore[]): Promise<number> {
    if (!readPendingRestoreHooks(restore.metadata.annotations).length) return 0;
    const backup = await backups.get(restore.metadata.namespace ?? '', restore.spec.backupName ?? '');
    const { waiting } = await advanceRestoreExecHooks({
      kube: opts.kube,
      restore,
      restores,
      podVolumeRestores,
      store: async () => (await locations.resolve(backup?.spec.storageLocation ?? opts.config.defaultBackupLocation))?.store,
      exec,
      now: opts.now(),
      limitMs: operationTimeoutMs(restore),
      log,
    });
    return waiting;
  }

  /** WaitingForPluginOperations*: look at the PVRs and DataDownloads; when none is left to wait for, go on to Finalizing*. */
  async function waitStep(key: ObjectKey, restore: Restore): Promise<ReconcileResult | void> {
    const state = await waitState(restore);
    await hooksStep(restore, state.podVolumes.podVolumeRestores);
    const counts = { restoreItemOperationsAttempted: state.attempted, restoreItemOperationsCompleted: state.completed, restoreItemOperationsFailed: state.failed };
    const updated = await restores.updateStatus(key.namespace, key.name, (r) => {
      const phase = r.status?.phase ?? RestorePhase.New;
      if (!WAITING.has(phase)) return false;
      const same = (Object.keys(counts) as (keyof typeof counts)[]).every((k) => r.status?.[k] === counts[k]);
      if (!state.done && same) return false;
      r.status = { ...(r.status ?? {}), ...counts, phase: phaseAfterWait(phase, state) };
    });
    if (!state.done) return { requeueAfterMs: opts.pollMs ?? POD_VOLUME_POLL_MS };
    log.info({ restore: key.name, completed: state.completed, failed: state.failed }, 'restore item operations finished');
    if (updated && FINALIZING.has(updated.status?.phase ?? '')) return finalizeStep(key);
  }

  /** Finalizing*: complete the restore's files in storage, then Completed or PartiallyFailed. */
  async function finalizeStep(key: ObjectKey): Promise<ReconcileResult | void> {
    const restore = await restores.get(key.namespace, key.name);
    if (!restore || !FINALIZING.has(restore.status?.phase ?? '')) return;
    const backup = await backups.get(key.namespace, restore.spec.backupName ?? '');
    const locName = backup?.spec.storageLocation ?? opts.config.defaultBackupLocation;
    const resolved = await locations.resolve(locName);
    // Retried by the work queue: the files cannot be completed without the location.
    if (!resolved) throw new Error(`storage location "${locName}" of restore ${key.name} not found; cannot finish the restore's files`);
    const { store } = resolved;
    const state = await waitState(restore);
    // The restore ends once the exec hooks of its pods have run (Velero waits for them while finalizing).
    if ((await hooksStep(restore, state.podVolumes.podVolumeRestores)) > 0) return { requeueAfterMs: opts.pollMs ?? POD_VOLUME_POLL_MS };
    const counts = await finalizeRestoreFiles({ kube: opts.kube, namespace: key.namespace, restore, store, state, serverLog: log });
    await restores.updateStatus(key.namespace, key.name, (r) => {
      const phase = r.status?.phase ?? RestorePhase.New;
      if (!FINALIZING.has(phase)) return false;
      r.status = {
        ...(r.status ?? {}),
        phase: phaseAfterFinalize(phase, counts.errors),
        warnings: counts.warnings,
        errors: counts.errors,
        restoreItemOperationsAttempted: state.attempted,
        restoreItemOperationsCompleted: state.completed,
        restoreItemOperationsFailed: state.failed,
        completionTimestamp: statusTime(opts.now()),
        hookStatus: finishedHookStatus(r.status?.hookStatus),
      };
    });
    log.info({ restore: key.name, errors: counts.errors, warnings: counts.warnings }, 'restore finished');
  }

  async function run(key: ObjectKey, signal: AbortSignal): Promise<ReconcileResult | void> {
    const attempt = attemptStep(await countAttempt(key));
    if (attempt.step === 'give-up') {
      await markFailed(key, attempt.reason);
      return;
    }
    const restore = await restores.get(key.namespace, key.name);
    if (!restore || restore.status?.phase !== RestorePhase.InProgress) return;
    const backup = await backups.get(key.namespace, restore.spec.backupName ?? '');
    if (!backup) {
      await markFailed(key, `backup "${restore.spec.backupName ?? ''}" disappeared while the restore was starting`);
      return;
    }
    const outcome = await executeRestore({
      restore,
      backup,
      kube: opts.kube,
      client,
      locations,
      registry,
      serverLog: log,
      resourceTimeoutMs: opts.config.resourceTimeoutMs,
      plugins: opts.plugins,
      operationTimeoutMs: operationTimeoutMs(restore),
      operationSyncMs: opts.config.itemOperationSyncFrequencyMs,
      ...(opts.restoreRole ? { restoreRole: opts.restoreRole } : {}),
      signal,
      onProgress: async (p) => {
        await restores.updateStatus(key.namespace, key.name, (r) => {
          if (r.status?.phase !== RestorePhase.InProgress) return false;
          r.status = { ...r.status, progress: { totalItems: p.totalItems, itemsRestored: p.itemsRestored } };
        });
      },
    });
    const waiting = WAITING.has(outcome.phase);
    const finalizing = FINALIZING.has(outcome.phase);
    const written = await restores.update(key.namespace, key.name, (r) => {
      if (TERMINAL.has(r.status?.phase ?? '')) return false;
      // Asked to be canceled (the run stopped, or ended meanwhile): Canceling, with what the run counted.
      if (isCancelRequested(r)) {
        r.status = { ...(r.status ?? {}), warnings: outcome.warnings, errors: outcome.errors, progress: outcome.progress };
        return beginRestoreCanceling(r);
      }
      r.metadata.annotations = { ...(r.metadata.annotations ?? {}) };
      writePendingRestoreHooks(r.metadata.annotations, outcome.execHooks);
      r.status = {
        ...(r.status ?? {}),
        phase: outcome.phase,
        ...(waiting
          ? { restoreItemOperationsAttempted: outcome.podVolumeRestores + outcome.dataDownloads }
          : finalizing
            ? {}
            : { completionTimestamp: statusTime(opts.now()), hookStatus: finishedHookStatus(r.status?.hookStatus) }),
        ...(!waiting && outcome.pluginOperations.attempted
          ? {
              restoreItemOperationsAttempted: outcome.pluginOperations.attempted,
              restoreItemOperationsCompleted: outcome.pluginOperations.completed,
              restoreItemOperationsFailed: outcome.pluginOperations.failed,
            }
          : {}),
        warnings: outcome.warnings,
        errors: outcome.errors,
        progress: outcome.progress,
        ...(outcome.failureReason ? { failureReason: outcome.failureReason } : {}),
      };
      // The attempt counter only matters while the restore runs.
      if (r.metadata.annotations) delete r.metadata.annotations[ATTEMPTS_ANNOTATION];
    });
    if (written?.status?.phase === RestorePhase.Canceling) {
      log.info({ restore: key.name, itemsRestored: outcome.progress.itemsRestored }, 'restore run stopped: the restore is canceled');
      return;
    }
    if (finalizing) {
      log.info({ restore: key.name, containers: outcome.execHooks.length }, 'restore items done; waiting for the exec hooks of restored pods');
      return { requeueAfterMs: opts.pollMs ?? POD_VOLUME_POLL_MS };
    }
    if (waiting) {
      log.info(
        { restore: key.name, phase: outcome.phase, podVolumeRestores: outcome.podVolumeRestores, dataDownloads: outcome.dataDownloads },
        'restore items done; waiting for pod volume restores and data downloads',
      );
      return { requeueAfterMs: opts.pollMs ?? POD_VOLUME_POLL_MS };
    }
    log.info({ restore: key.name, phase: outcome.phase, warnings: outcome.warnings, errors: outcome.errors }, 'restore finished');
  }

  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    let restore: Restore | undefined;
    try {
      restore = await restores.get(key.namespace, key.name);
    } catch (err) {
      // A malformed spec (a hook timeout that is not a duration, an unknown onError...) fails validation, naming the field.
      const invalid = err instanceof ValidationError ? err : (err as { cause?: unknown }).cause instanceof ValidationError ? ((err as { cause: ValidationError }).cause) : undefined;
      if (!invalid) throw err;
      const raw = await lenient.get(key.namespace, key.name);
      if (raw && (raw.status?.phase ?? RestorePhase.New) === RestorePhase.New) await failValidation(key, invalid.problems.map((p) => `${p.field ? `${p.field}: ` : ''}${p.problem}`));
      return;
    }
    if (!restore) return;
    const next = restoreStep(restore, { running: runs.has(keyString(key)) });
    switch (next.step) {
      case 'none':
        return;
      case 'remove-files':
        return removeFiles(restore, key);
      case 'wait':
        return waitStep(key, restore);
      case 'finalize':
        return finalizeStep(key);
      case 'resume':
        log.info({ restore: key.name }, 'found a restore InProgress that no worker is running (server restart); running it again');
        break;
      case 'start': {
        // A restore from a schedule restores the schedule's latest Completed backup, written into spec.backupName.
        const fromSchedule = restore.spec.scheduleName && !restore.spec.backupName ? backupOfSchedule(await backups.list(key.namespace, selectorFor({ [Labels.ScheduleName]: labelValue(restore.spec.scheduleName) }))) : undefined;
        if (fromSchedule && 'problem' in fromSchedule) return failValidation(key, [...restoreSpecProblems(restore), fromSchedule.problem]);
        const backupName = restore.spec.backupName || (fromSchedule && 'backupName' in fromSchedule ? fromSchedule.backupName : '');
        const backup = backupName ? await backups.get(key.namespace, backupName) : undefined;
        const locName = backup?.spec.storageLocation ?? opts.config.defaultBackupLocation;
        const location = backup ? await locations.get(locName) : undefined;
        const problems = validateRestore({ restore, backup, location, backupName });
        const modifiers = await loadResourceModifiers(opts.kube, restore);
        if (modifiers.problem) problems.push(modifiers.problem);
        if (problems.length) return failValidation(key, problems);
        const start = { backupName, now: opts.now(), defaultItemOperationTimeoutMs: opts.config.defaultItemOperationTimeoutMs };
        const started = await restores.update(key.namespace, key.name, (r) => startRestore(r, start));
        if (started?.status?.phase !== RestorePhase.InProgress) return;
        log.info({ restore: key.name, backup: backup?.metadata.name, backupPhase: backup?.status?.phase ?? BackupPhase.New }, 'restore started');
        break;
      }
    }
    const thisRun = runs.start(keyString(key));
    try {
      // A cancel that came while the restore was being started: the cancel controller takes it.
      const current = await restores.get(key.namespace, key.name);
      if (!current || isCancelRequested(current)) return;
      return await run(key, thisRun.signal);
    } finally {
      runs.end(keyString(key));
      // What the run held (the items it read) goes back to the system while the server waits for the next one.
      collectAllGarbage();
    }
  };
}

export async function startRestoreController(ctx: ServerContext): Promise<Stoppable> {
  const client: CustomClient<Restore> = customClient<Restore>(ctx.kube, Kinds.Restore, parseRestore);
  const runs = new RunRegistry();
  const cancel = await startRestoreCancelController({ ...ctx, runs });
  const controller = await startCustomController<Restore>(ctx, client, {
    name: 'restore',
    reconcile: restoreReconciler({ ...ctx, runs }),
  });
  return {
    async stop() {
      await controller.stop();
      await cancel.stop();
    },
  };
}
