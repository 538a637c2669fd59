/**
 * Which server metric moves for which observed change (docs/metrics.md), as pure functions of the phase seen before
 * and the object seen now. The server counts from observed state, as Velero counts in its controllers:
 *   Backup  New → InProgress                      attempt
 *           New → FailedValidation                validation failure, last status 0
 *           not finished → Completed              success, last status 1, last successful timestamp
 *           not finished → PartiallyFailed|Failed  partial failure | failure, last status 0
 *           (each of the three also: duration, items, item errors, warnings, volume and CSI snapshot counts)
 *           Canceling/Canceled (cairn's own phases) move none of Velero's counters
 *   Restore New → anything                        attempt (+ validation failure for FailedValidation)
 *           not finished → Completed|PartiallyFailed|Failed  success | partial failure | failure
 *   DeleteBackupRequest New → InProgress          deletion attempt; InProgress → Processed: success, or failure with errors
 * A first sight of an object (the list at start, a backup synced from storage) moves no counter: a restarted server
 * does not count a finished backup twice. Gauges are set from what exists (`gaugesAtStart`).
 */
import { Labels } from '../../api/constants.js';
import {
  BackupPhase,
  BackupStorageLocationPhase,
  DeleteBackupRequestPhase,
  RestorePhase,
  type Backup,
  type BackupStorageLocation,
  type DeleteBackupRequest,
  type Restore,
  creationTimestampOf,
} from '../../api/index.js';
import { secondsBetween, type MetricEffect } from '../../base/metrics.js';
import {
  BACKUP_NAME_LABEL,
  LAST_STATUS_FAILURE,
  LAST_STATUS_SUCCESS,
  LOCATION_LABEL,
  REPOSITORY_LABEL,
  SCHEDULE_INIT_METRICS,
  SCHEDULE_LABEL,
  SCHEDULE_REMOVE_METRICS,
  ServerMetric,
} from './definitions.js';

/** The schedule label of a backup: its schedule's name, '' for a manual backup (as Velero). */
export function backupSchedule(backup: Pick<Backup, 'metadata'>): string {
  return backup.metadata?.labels?.[Labels.ScheduleName] ?? '';
}

const isNew = (phase: string | undefined) => !phase || phase === BackupPhase.New;
/** Phases after which nothing more is counted (Deleting follows a finished backup). */
const FINISHED_BACKUP: readonly string[] = [BackupPhase.Completed, BackupPhase.PartiallyFailed, BackupPhase.Failed, BackupPhase.FailedValidation, BackupPhase.Canceled, BackupPhase.Deleting];
const FINISHED_RESTORE: readonly string[] = [RestorePhase.Completed, RestorePhase.PartiallyFailed, RestorePhase.Failed, RestorePhase.FailedValidation, RestorePhase.Canceled];
/** Phases a New object may go to without being attempted: refused, or canceled before it ran (Velero has no cancel). */
const NOT_ATTEMPTED: readonly string[] = [BackupPhase.FailedValidation, BackupPhase.Canceling, BackupPhase.Canceled];

const inc = (metric: ServerMetric, schedule: string, value?: number): MetricEffect => ({ op: 'inc', metric, labels: { [SCHEDULE_LABEL]: schedule }, ...(value !== undefined ? { value } : {}) });
const set = (metric: ServerMetric, schedule: string, value: number): MetricEffect => ({ op: 'set', metric, labels: { [SCHEDULE_LABEL]: schedule }, value });

/** Effects of a Backup seen in phase `next.status.phase` after `prevPhase` (undefined: first sight). */
export function backupTransitionEffects(prevPhase: string | undefined, next: Backup, now: Date): MetricEffect[] {
  if (prevPhase === undefined) return [];
  const phase = next.status?.phase ?? '';
  if (phase === prevPhase || (isNew(prevPhase) && isNew(phase))) return [];
  const schedule = backupSchedule(next);
  if (isNew(prevPhase) && phase === BackupPhase.FailedValidation) {
    return [inc(ServerMetric.BackupValidationFailureTotal, schedule), set(ServerMetric.BackupLastStatus, schedule, LAST_STATUS_FAILURE)];
  }
  const effects: MetricEffect[] = [];
  if (isNew(prevPhase) && !NOT_ATTEMPTED.includes(phase)) effects.push(inc(ServerMetric.BackupAttemptTotal, schedule));
  if (!FINISHED_BACKUP.includes(prevPhase) && (phase === BackupPhase.Completed || phase === BackupPhase.PartiallyFailed || phase === BackupPhase.Failed)) {
    effects.push(...backupEndEffects(next, phase, schedule, now));
  }
  return effects;
}

function backupEndEffects(backup: Backup, phase: 'Completed' | 'PartiallyFailed' | 'Failed', schedule: string, now: Date): MetricEffect[] {
  const status = backup.status ?? {};
  const effects: MetricEffect[] = [];
  if (phase === BackupPhase.Completed) {
    const completedAt = Date.parse(status.completionTimestamp ?? '');
    effects.push(
      inc(ServerMetric.BackupSuccessTotal, schedule),
      set(ServerMetric.BackupLastStatus, schedule, LAST_STATUS_SUCCESS),
      set(ServerMetric.BackupLastSuccessfulTimestamp, schedule, Math.floor((Number.isFinite(completedAt) ? completedAt : now.getTime()) / 1000)),
    );
  } else {
    effects.push(
      inc(phase === BackupPhase.PartiallyFailed ? ServerMetric.BackupPartialFailureTotal : ServerMetric.BackupFailureTotal, schedule),
      set(ServerMetric.BackupLastStatus, schedule, LAST_STATUS_FAILURE),
    );
  }
  const seconds = secondsBetween(status.startTimestamp, status.completionTimestamp);
  if (seconds !== undefined) effects.push({ op: 'observe', metric: ServerMetric.BackupDurationSeconds, labels: { [SCHEDULE_LABEL]: schedule }, value: seconds });
  if (status.progress?.totalItems !== undefined) effects.push(set(ServerMetric.BackupItemsTotal, schedule, status.progress.totalItems));
  effects.push(set(ServerMetric.BackupItemsErrors, schedule, status.errors ?? 0));
  if ((status.warnings ?? 0) > 0) effects.push(inc(ServerMetric.BackupWarningTotal, schedule));
  const volumeAttempted = status.volumeSnapshotsAttempted ?? 0;
  const volumeCompleted = status.volumeSnapshotsCompleted ?? 0;
  effects.push(
    inc(ServerMetric.VolumeSnapshotAttemptTotal, schedule, volumeAttempted),
    inc(ServerMetric.VolumeSnapshotSuccessTotal, schedule, volumeCompleted),
    inc(ServerMetric.VolumeSnapshotFailureTotal, schedule, Math.max(0, volumeAttempted - volumeCompleted)),
  );
  // Per backup name, as Velero: only for backups that took CSI snapshots, so other backups add no series.
  const csiAttempted = status.csiVolumeSnapshotsAttempted ?? 0;
  if (csiAttempted > 0) {
    const csiCompleted = status.csiVolumeSnapshotsCompleted ?? 0;
    const labels = { [SCHEDULE_LABEL]: schedule, [BACKUP_NAME_LABEL]: backup.metadata?.name ?? '' };
    effects.push(
      { op: 'inc', metric: ServerMetric.CsiSnapshotAttemptTotal, labels, value: csiAttempted },
      { op: 'inc', metric: ServerMetric.CsiSnapshotSuccessTotal, labels, value: csiCompleted },
      { op: 'inc', metric: ServerMetric.CsiSnapshotFailureTotal, labels, value: Math.max(0, csiAttempted - csiCompleted) },
    );
  }
  return effects;
}

/** Effects of a Restore seen after `prevPhase` (undefined: first sight). Its schedule label is spec.scheduleName. */
export function restoreTransitionEffects(prevPhase: string | undefined, next: Restore): MetricEffect[] {
  if (prevPhase === undefined) return [];
  const phase = next.status?.phase ?? '';
  if (phase === prevPhase || (isNew(prevPhase) && isNew(phase))) return [];
  const schedule = next.spec?.scheduleName ?? '';
  const effects: MetricEffect[] = [];
  if (isNew(prevPhase) && phase !== RestorePhase.Canceling && phase !== RestorePhase.Canceled) {
    effects.push(inc(ServerMetric.RestoreAttemptTotal, schedule));
    if (phase === RestorePhase.FailedValidation) effects.push(inc(ServerMetric.RestoreValidationFailedTotal, schedule));
  }
  if (!FINISHED_RESTORE.includes(prevPhase)) {
    if (phase === RestorePhase.Completed) effects.push(inc(ServerMetric.RestoreSuccessTotal, schedule));
    if (phase === RestorePhase.PartiallyFailed) effects.push(inc(ServerMetric.RestorePartialFailureTotal, schedule));
    if (phase === RestorePhase.Failed) effects.push(inc(ServerMetric.RestoreFailedTotal, schedule));
  }
  return effects;
}

/**
 * Effects of a DeleteBackupRequest seen after `prevPhase` (undefined: first sight). `schedule` is the schedule label of
 * the backup it deletes (the caller remembers it: a deleted backup is gone by the time the request is Processed).
 * A request refused at once (New → Processed: backup not found, location read-only) counts nothing, as in Velero.
 */
export function deleteRequestTransitionEffects(prevPhase: string | undefined, next: DeleteBackupRequest, schedule: string): MetricEffect[] {
  if (prevPhase === undefined) return [];
  const phase = next.status?.phase ?? '';
  if (isNew(prevPhase) && phase === DeleteBackupRequestPhase.InProgress) return [inc(ServerMetric.BackupDeletionAttemptTotal, schedule)];
  if (prevPhase === DeleteBackupRequestPhase.InProgress && phase === DeleteBackupRequestPhase.Processed) {
    const failed = (next.status?.errors ?? []).length > 0;
    return [inc(failed ? ServerMetric.BackupDeletionFailureTotal : ServerMetric.BackupDeletionSuccessTotal, schedule)];
  }
  return [];
}

/** The location's status gauge from its observed phase (1 Available, 0 Unavailable); removed with the location. */
export function locationEffects(name: string, location: BackupStorageLocation | undefined): MetricEffect[] {
  const labels = { [LOCATION_LABEL]: name };
  if (!location) return [{ op: 'remove', metric: ServerMetric.BackupLocationStatus, labels }];
  const phase = location.status?.phase;
  if (phase === BackupStorageLocationPhase.Available) return [{ op: 'set', metric: ServerMetric.BackupLocationStatus, labels, value: 1 }];
  if (phase === BackupStorageLocationPhase.Unavailable) return [{ op: 'set', metric: ServerMetric.BackupLocationStatus, labels, value: 0 }];
  return [];
}

/** A schedule's series appear when it is seen (counters at 0, last status 1, as Velero's InitSchedule). */
export function scheduleInitEffects(schedule: string): MetricEffect[] {
  return SCHEDULE_INIT_METRICS.map((metric) => ({
    op: 'init' as const,
    metric,
    labels: { [SCHEDULE_LABEL]: schedule },
    ...(metric === ServerMetric.BackupLastStatus ? { value: LAST_STATUS_SUCCESS } : {}),
  }));
}

/** A deleted schedule's series go (Velero's RemoveSchedule). */
export function scheduleRemoveEffects(schedule: string): MetricEffect[] {
  return SCHEDULE_REMOVE_METRICS.map((metric) => ({ op: 'remove' as const, metric, labels: { [SCHEDULE_LABEL]: schedule } }));
}

/**
 * Gauges from the backups that exist when the server starts: per schedule, the completion time of the newest
 * Completed backup (last successful timestamp) and whether the newest finished backup succeeded (last status).
 */
export function gaugesAtStart(backups: readonly Backup[]): MetricEffect[] {
  const lastSuccess = new Map<string, number>();
  const lastFinished = new Map<string, { at: number; ok: boolean }>();
  for (const b of backups) {
    const phase = b.status?.phase ?? '';
    if (!([BackupPhase.Completed, BackupPhase.PartiallyFailed, BackupPhase.Failed, BackupPhase.FailedValidation] as string[]).includes(phase)) continue;
    const schedule = backupSchedule(b);
    const at = b.status?.completionTimestamp ? Date.parse(b.status.completionTimestamp) : (creationTimestampOf(b)?.getTime() ?? NaN);
    if (!Number.isFinite(at)) continue;
    const ok = phase === BackupPhase.Completed;
    if (ok && at > (lastSuccess.get(schedule) ?? -Infinity)) lastSuccess.set(schedule, at);
    if (at > (lastFinished.get(schedule)?.at ?? -Infinity)) lastFinished.set(schedule, { at, ok });
  }
  return [
    ...[...lastSuccess].map(([schedule, at]): MetricEffect => ({ op: 'setMax', metric: ServerMetric.BackupLastSuccessfulTimestamp, labels: { [SCHEDULE_LABEL]: schedule }, value: Math.floor(at / 1000) })),
    ...[...lastFinished].map(([schedule, f]) => set(ServerMetric.BackupLastStatus, schedule, f.ok ? LAST_STATUS_SUCCESS : LAST_STATUS_FAILURE)),
  ];
}

/** The size of the backup's tarball as the server uploaded it (Velero sets it when the tarball is written). */
export function tarballSizeEffects(backup: Pick<Backup, 'metadata'>, bytes: number): MetricEffect[] {
  return [set(ServerMetric.BackupTarballSizeBytes, backupSchedule(backup), bytes)];
}

/**
 * One maintenance run of a BackupRepository as this server ran it: success or failure, its duration, and (after a
 * success) the bytes the repository holds in storage.
 */
export function maintenanceEffects(run: { repository: string; ok: boolean; seconds: number; sizeBytes?: number | undefined }): MetricEffect[] {
  const labels = { [REPOSITORY_LABEL]: run.repository };
  const effects: MetricEffect[] = [
    { op: 'inc', metric: run.ok ? ServerMetric.RepositoryMaintenanceSuccessTotal : ServerMetric.RepositoryMaintenanceFailureTotal, labels },
    { op: 'observe', metric: ServerMetric.RepositoryMaintenanceDuration, labels, value: run.seconds },
  ];
  if (run.ok && run.sizeBytes !== undefined) effects.push({ op: 'set', metric: ServerMetric.RepositorySizeBytes, labels, value: run.sizeBytes });
  return effects;
}

/** A deleted repository's series go. */
export function repositoryRemoveEffects(repository: string): MetricEffect[] {
  const labels = { [REPOSITORY_LABEL]: repository };
  return [ServerMetric.RepositoryMaintenanceSuccessTotal, ServerMetric.RepositoryMaintenanceFailureTotal, ServerMetric.RepositoryMaintenanceDuration, ServerMetric.RepositorySizeBytes].map(
    (metric) => ({ op: 'remove' as const, metric, labels }),
  );
}
