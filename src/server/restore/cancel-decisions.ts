/**
 * What a requested cancel does to a Restore (docs/restore.md "Canceling a restore"), as pure functions of the Restore
 * as read now and of what this process runs; ./restore-cancel-controller.ts and ./restore-controller.ts carry them
 * out. Tested table by table in test/unit/server/restore/cancel-decisions.test.ts.
 *
 * A restore's run (the item pass) is stopped through its abort signal and writes Canceling itself; a restore waiting
 * for its pod volume restores and data downloads, finalizing, or left InProgress by a server that stopped goes
 * Canceling at once (what the restore wrote to storage is kept either way: restored objects stay, and its log says
 * what was restored). Canceling: its unfinished PodVolumeRestores and DataDownloads get `spec.cancel`, and once they
 * have ended it is Canceled.
 */
import { CANCELABLE_RESTORE_PHASES, deletionTimestampOf, type Restore } from '../../api/index.js';
import { beginCancelingOf, cancelWaitStep, endCanceledOf, sharedCancelStep, type CancelStep } from '../cancel-lifecycle.js';
import { RESTORE_EXEC_HOOKS_ANNOTATION } from '../hooks/restore-hooks.js';
import { ATTEMPTS_ANNOTATION } from './restore-decisions.js';

/** How often a Canceling restore looks at its PodVolumeRestores and DataDownloads again. */
export const RESTORE_CANCEL_POLL_MS = 2000;
/** How long a Canceling restore waits for them before it ends anyway (past the node agents' one-hour watchdog). */
export const RESTORE_CANCEL_WAIT_LIMIT_MS = 75 * 60_000;

/** A restore takes only the steps both kinds share (its item pass is the run `abort-run` stops). */
export type RestoreCancelStep = CancelStep;

export function restoreCancelStep(restore: Restore, o: { runningHere: boolean }): RestoreCancelStep {
  if (deletionTimestampOf(restore)) return { step: 'none' };
  // Waiting, finalizing, or left by a server that stopped: nobody else writes it.
  return sharedCancelStep(restore, { cancelable: CANCELABLE_RESTORE_PHASES, runningHere: o.runningHere }) ?? { step: 'begin' };
}

/** Moves a running Restore to Canceling (false unless a cancel is requested and it still runs). */
export function beginRestoreCanceling(r: Restore): boolean {
  return beginCancelingOf(r, CANCELABLE_RESTORE_PHASES, (annotations) => {
    delete annotations[ATTEMPTS_ANNOTATION];
    // Exec hooks still waiting for restored containers are not run for a canceled restore.
    delete annotations[RESTORE_EXEC_HOOKS_ANNOTATION];
  });
}

/** Ends a Restore Canceled (false unless it is Canceling, or New with a cancel requested). */
export function endRestoreCanceled(r: Restore, now: Date): boolean {
  return endCanceledOf(r, now);
}

export type RestoreCancelingStep = { step: 'wait'; requeueAfterMs: number } | { step: 'end'; gaveUp: boolean };

/** The step of a Canceling restore, given how many of its volume operations have not ended. */
export function restoreCancelingStep(running: number, o: { requestedAtMs: number | undefined; nowMs: number }): RestoreCancelingStep {
  const wait = cancelWaitStep(running, { ...o, limitMs: RESTORE_CANCEL_WAIT_LIMIT_MS, pollMs: RESTORE_CANCEL_POLL_MS });
  return wait.step === 'done' ? { step: 'end', gaveUp: wait.gaveUp } : wait;
}
