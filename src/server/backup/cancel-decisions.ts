/**
 * What a requested cancel does to a Backup (docs/backup.md "Canceling a backup"), as pure functions of the Backup as
 * read now and of what this process runs; ./backup-cancel-controller.ts, ./backup-controller.ts and
 * ./backup-operations-controller.ts carry them out. Tested table by table in
 * test/unit/server/backup/cancel-decisions.test.ts.
 *
 * Who moves a running backup to Canceling is whoever could still be writing it, so nothing of it is written after the
 * clean-up started: the run of this process (stopped through its abort signal, it writes Canceling on its way out),
 * the operations controller for the backups it waits on or finalizes (on its own queue, so never in the middle of a
 * finalization), and the cancel controller only for a run nobody carries on (its server stopped). The cancel
 * controller alone works on a Canceling backup: it stops its PodVolumeBackups and DataUploads, waits for them, deletes
 * what the backup wrote and ends it Canceled.
 */
import { CANCELABLE_BACKUP_PHASES, type Backup } from '../../api/index.js';
import { beginCancelingOf, cancelWaitStep, endCanceledOf, sharedCancelStep, type CancelStep } from '../cancel-lifecycle.js';
import { ATTEMPTS_ANNOTATION, mustRun } from './backup-decisions.js';
import { ownedByOperations, UPLOADING_ANNOTATION } from './operations-decisions.js';
import { claimState, releaseClaim, STALE_AFTER_MS } from './run-claim.js';

/** How often a Canceling backup looks at its PodVolumeBackups and DataUploads again. */
export const CANCEL_POLL_MS = 2000;
/**
 * How long a Canceling backup waits for its PodVolumeBackups and DataUploads to end before it cleans up anyway.
 * The node agents force a cancel within an hour (their watchdog); a CR no node agent looks at (its node is gone) would
 * otherwise hold the backup Canceling for ever.
 */
export const CANCEL_WAIT_LIMIT_MS = 75 * 60_000;

export type BackupCancelStep =
  | CancelStep
  /** Another live server process runs it (a rolling update): that process stops it; look again later. */
  | { step: 'wait-for-runner'; runner: string; retryInMs: number }
  /** The operations controller waits on it or finalizes it: it writes Canceling on its own queue. */
  | { step: 'operations' };

export interface CancelStepOptions {
  /** Whether this process is running the backup now. */
  runningHere: boolean;
  /** This process, as written in the run claim. */
  me: string;
  nowMs: number;
  claimStaleAfterMs?: number;
}

export function backupCancelStep(backup: Backup, o: CancelStepOptions): BackupCancelStep {
  const shared = sharedCancelStep(backup, { cancelable: CANCELABLE_BACKUP_PHASES, runningHere: o.runningHere });
  if (shared) return shared;
  if (ownedByOperations(backup)) return { step: 'operations' };
  if (mustRun(backup)) {
    const claim = claimState(backup.metadata?.annotations, o.me, o.nowMs, o.claimStaleAfterMs ?? STALE_AFTER_MS);
    if (!claim.free) return { step: 'wait-for-runner', runner: claim.runner, retryInMs: claim.retryInMs };
  }
  return { step: 'begin' };
}

/**
 * Moves a running Backup to Canceling (false, nothing to write, unless a cancel is requested and it still runs):
 * the run's claim, attempt count and upload mark go, so no controller runs it again.
 */
export function beginCanceling(b: Backup): boolean {
  return beginCancelingOf(b, CANCELABLE_BACKUP_PHASES, (annotations) => {
    releaseClaim(annotations);
    delete annotations[ATTEMPTS_ANNOTATION];
    delete annotations[UPLOADING_ANNOTATION];
  });
}

/** Ends a Backup Canceled (false unless it is Canceling, or New with a cancel requested). */
export function endCanceled(b: Backup, now: Date): boolean {
  return endCanceledOf(b, now);
}

/** Volume operations as the cancel sees them: how many have not ended yet. */
export interface VolumeOperationsState {
  /** PodVolumeBackups that may still move data (`volumeOperationRunning`: not ended, and not New with spec.cancel). */
  podVolumeBackupsRunning: number;
  /** DataUploads that may still move data. */
  dataUploadsRunning: number;
}

export type CancelingStep =
  /** Some have not ended: look again after `requeueAfterMs`. */
  | { step: 'wait'; requeueAfterMs: number }
  /** All ended (or waited for too long: `gaveUp`): delete what the backup wrote, then Canceled. */
  | { step: 'clean-up'; gaveUp: boolean };

/** The step of a Canceling backup, given its volume operations and since when the cancel was requested. */
export function cancelingStep(state: VolumeOperationsState, o: { requestedAtMs: number | undefined; nowMs: number }): CancelingStep {
  const running = state.podVolumeBackupsRunning + state.dataUploadsRunning;
  const wait = cancelWaitStep(running, { ...o, limitMs: CANCEL_WAIT_LIMIT_MS, pollMs: CANCEL_POLL_MS });
  return wait.step === 'done' ? { step: 'clean-up', gaveUp: wait.gaveUp } : wait;
}
