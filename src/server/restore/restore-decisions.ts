/**
 * The Restore controller's decisions (restore-controller.ts carries them out), as pure functions of the Restore as
 * read now and what this process runs: which road it takes, what its start writes, whether a restarted run may go
 * on, and the phase after waiting and after finalizing. Tested table by table in
 * test/unit/server/restore/restore-controller.test.ts.
 */
import { RestorePhase, deletionTimestampOf, formatDuration, isCancelRequested, parseDuration, statusTime, type Restore } from '../../api/index.js';

/** Annotation counting how many times a server started this restore (restart safety). */
export const ATTEMPTS_ANNOTATION = 'restore.cairn.io/attempts';
export const MAX_ATTEMPTS = 3;

export const TERMINAL: ReadonlySet<string> = new Set([RestorePhase.FailedValidation, RestorePhase.Completed, RestorePhase.PartiallyFailed, RestorePhase.Failed, RestorePhase.Canceled]);
export const WAITING: ReadonlySet<string> = new Set([RestorePhase.WaitingForPluginOperations, RestorePhase.WaitingForPluginOperationsPartiallyFailed]);
export const FINALIZING: ReadonlySet<string> = new Set([RestorePhase.Finalizing, RestorePhase.FinalizingPartiallyFailed]);

export type RestoreStep =
  /** Being deleted: its files go from storage, then its finalizer. */
  | { step: 'remove-files' }
  /** New: validate, then start and run. */
  | { step: 'start' }
  /** InProgress that no worker of this process runs (a restart): run it again. */
  | { step: 'resume' }
  | { step: 'wait' }
  | { step: 'finalize' }
  | { step: 'none' };

export function restoreStep(restore: Restore, o: { running: boolean }): RestoreStep {
  if (deletionTimestampOf(restore)) return o.running ? { step: 'none' } : { step: 'remove-files' };
  // Asked to be canceled: ./restore-cancel-controller.ts takes it (./cancel-decisions.ts).
  if (isCancelRequested(restore)) return { step: 'none' };
  const phase = restore.status?.phase ?? RestorePhase.New;
  if (TERMINAL.has(phase) || o.running) return { step: 'none' };
  if (phase === RestorePhase.New) return { step: 'start' };
  if (WAITING.has(phase)) return { step: 'wait' };
  if (FINALIZING.has(phase)) return { step: 'finalize' };
  if (phase === RestorePhase.InProgress) return { step: 'resume' };
  return { step: 'none' };
}

/**
 * What starting a validated Restore writes (with the backup it restores: its own, or the schedule's latest); false
 * (nothing) unless it is still New.
 */
export function startRestore(r: Restore, o: { backupName: string; now: Date; defaultItemOperationTimeoutMs: number }): boolean {
  if ((r.status?.phase ?? RestorePhase.New) !== RestorePhase.New || isCancelRequested(r)) return false;
  if (!r.spec.backupName) r.spec.backupName = o.backupName;
  const { validationErrors: _none, ...rest } = r.status ?? {};
  // An unset or zero timeout takes the server default, written into the spec as Velero does.
  const timeout = r.spec.itemOperationTimeout;
  if (!timeout || parseDuration(timeout) === 0) r.spec.itemOperationTimeout = formatDuration(o.defaultItemOperationTimeoutMs);
  r.status = { ...rest, phase: RestorePhase.InProgress, startTimestamp: statusTime(o.now) };
  return true;
}

/** A run counted as attempt `attempts`: goes on, or gives up after too many restarts. */
export function attemptStep(attempts: number): { step: 'run' } | { step: 'give-up'; reason: string } {
  return attempts > MAX_ATTEMPTS ? { step: 'give-up', reason: `the restore was interrupted by ${attempts - 1} server restarts; giving up` } : { step: 'run' };
}

/** The phase after one look at the item operations: Finalizing* once none is left to wait for. */
export function phaseAfterWait(phase: RestorePhase, state: { done: boolean; failed: number }): RestorePhase {
  if (!state.done) return phase;
  const partly = phase === RestorePhase.WaitingForPluginOperationsPartiallyFailed || state.failed > 0;
  return partly ? RestorePhase.FinalizingPartiallyFailed : RestorePhase.Finalizing;
}

/** The final phase once the restore's files are complete. */
export function phaseAfterFinalize(phase: RestorePhase, errors: number): RestorePhase {
  return phase === RestorePhase.FinalizingPartiallyFailed || errors > 0 ? RestorePhase.PartiallyFailed : RestorePhase.Completed;
}
