/**
 * Canceling a running backup or restore (docs/backup.md, docs/restore.md). Velero has no cancel, so the request is an
 * annotation (the CRDs' specs stay Velero's): `cairn backup|restore cancel` (or a backup deletion) sets it, and the
 * owning controller stops the work, ends what it started and moves the object Canceling → Canceled. The annotation's
 * value is the time of the request (RFC 3339, as status times are written); only its presence counts.
 */
import { BackupRunningPhases } from './kinds/backup.js';
import { RestorePhase } from './kinds/restore.js';
import { statusTime } from './time.js';

export const CANCEL_REQUESTED_ANNOTATION = 'cairn.io/cancel-requested';

/** Whether a cancel was requested for this Backup or Restore. */
export function isCancelRequested(obj: { metadata?: { annotations?: Record<string, string> | undefined } | undefined }): boolean {
  return obj.metadata?.annotations?.[CANCEL_REQUESTED_ANNOTATION] !== undefined;
}

/** Backup phases a cancel acts on: not started yet, or still running. */
export const CANCELABLE_BACKUP_PHASES: ReadonlySet<string> = new Set(['', ...BackupRunningPhases]);

/** Restore phases a cancel acts on. */
export const CANCELABLE_RESTORE_PHASES: ReadonlySet<string> = new Set([
  '',
  RestorePhase.New,
  RestorePhase.InProgress,
  RestorePhase.WaitingForPluginOperations,
  RestorePhase.WaitingForPluginOperationsPartiallyFailed,
  RestorePhase.Finalizing,
  RestorePhase.FinalizingPartiallyFailed,
]);

/** Writes the request (false when it is already there: nothing to write). */
export function requestCancel(obj: { metadata: { annotations?: Record<string, string> | undefined } }, now: Date): boolean {
  if (isCancelRequested(obj)) return false;
  obj.metadata.annotations = { ...obj.metadata.annotations, [CANCEL_REQUESTED_ANNOTATION]: statusTime(now) };
  return true;
}

/**
 * Whether a PodVolumeBackup/Restore or DataUpload/Download of a canceled backup or restore may still move data. One
 * that ended has stopped; so has one still New with `spec.cancel`: no node agent starts it any more (the one that
 * takes it ends it Canceled, and one no node agent takes, its pod on no node, never moves a byte).
 */
export function volumeOperationRunning(op: { spec: { cancel?: boolean | undefined }; status?: { phase?: string | undefined } | undefined }): boolean {
  const phase = op.status?.phase ?? '';
  if (phase === 'Completed' || phase === 'Failed' || phase === 'Canceled') return false;
  return !((phase === '' || phase === 'New') && op.spec.cancel === true);
}
