/**
 * The metrics the server exports on /metrics (docs/metrics.md): Velero v1.17's server metrics with its names, help
 * texts, label names and buckets (pkg/metrics/metrics.go), so dashboards and alerts made for Velero work unchanged,
 * and cairn's own, prefixed `cairn_` (repository maintenance and size).
 */
import { defineMetric, type MetricDefinition, type MetricType } from '../../base/metrics.js';

/** Metric names, as constants so decisions and tests cannot misspell them. */
export const ServerMetric = {
  BackupTarballSizeBytes: 'velero_backup_tarball_size_bytes',
  BackupLastSuccessfulTimestamp: 'velero_backup_last_successful_timestamp',
  BackupTotal: 'velero_backup_total',
  BackupAttemptTotal: 'velero_backup_attempt_total',
  BackupSuccessTotal: 'velero_backup_success_total',
  BackupPartialFailureTotal: 'velero_backup_partial_failure_total',
  BackupFailureTotal: 'velero_backup_failure_total',
  BackupValidationFailureTotal: 'velero_backup_validation_failure_total',
  BackupDeletionAttemptTotal: 'velero_backup_deletion_attempt_total',
  BackupDeletionSuccessTotal: 'velero_backup_deletion_success_total',
  BackupDeletionFailureTotal: 'velero_backup_deletion_failure_total',
  BackupDurationSeconds: 'velero_backup_duration_seconds',
  BackupItemsTotal: 'velero_backup_items_total',
  BackupItemsErrors: 'velero_backup_items_errors',
  BackupWarningTotal: 'velero_backup_warning_total',
  BackupLastStatus: 'velero_backup_last_status',
  BackupLocationStatus: 'velero_backup_location_status_gauge',
  RestoreTotal: 'velero_restore_total',
  RestoreAttemptTotal: 'velero_restore_attempt_total',
  RestoreSuccessTotal: 'velero_restore_success_total',
  RestorePartialFailureTotal: 'velero_restore_partial_failure_total',
  RestoreFailedTotal: 'velero_restore_failed_total',
  RestoreValidationFailedTotal: 'velero_restore_validation_failed_total',
  VolumeSnapshotAttemptTotal: 'velero_volume_snapshot_attempt_total',
  VolumeSnapshotSuccessTotal: 'velero_volume_snapshot_success_total',
  VolumeSnapshotFailureTotal: 'velero_volume_snapshot_failure_total',
  CsiSnapshotAttemptTotal: 'velero_csi_snapshot_attempt_total',
  CsiSnapshotSuccessTotal: 'velero_csi_snapshot_success_total',
  CsiSnapshotFailureTotal: 'velero_csi_snapshot_failure_total',
  // cairn's own
  RepositoryMaintenanceSuccessTotal: 'cairn_repository_maintenance_success_total',
  RepositoryMaintenanceFailureTotal: 'cairn_repository_maintenance_failure_total',
  RepositoryMaintenanceDuration: 'cairn_repository_maintenance_duration_seconds',
  RepositorySizeBytes: 'cairn_repository_size_bytes',
} as const;
export type ServerMetric = (typeof ServerMetric)[keyof typeof ServerMetric];

/** Velero's label names. */
export const SCHEDULE_LABEL = 'schedule';
export const BACKUP_NAME_LABEL = 'backupName';
export const LOCATION_LABEL = 'backup_location_name';
/** cairn's label for a BackupRepository's name. */
export const REPOSITORY_LABEL = 'repository';

/** Velero's backup_last_status values. */
export const LAST_STATUS_SUCCESS = 1;
export const LAST_STATUS_FAILURE = 0;

const bySchedule = (name: ServerMetric, type: MetricType, help: string) => defineMetric(name, type, help, [SCHEDULE_LABEL]);
const byCsiBackup = (name: ServerMetric, help: string) => defineMetric(name, 'counter', help, [SCHEDULE_LABEL, BACKUP_NAME_LABEL]);
const byRepository = (name: ServerMetric, type: MetricType, help: string) => defineMetric(name, type, help, [REPOSITORY_LABEL]);

export const SERVER_METRICS: readonly MetricDefinition[] = [
  bySchedule(ServerMetric.BackupTarballSizeBytes, 'gauge', 'Size, in bytes, of a backup'),
  bySchedule(ServerMetric.BackupLastSuccessfulTimestamp, 'gauge', 'Last time a backup ran successfully, Unix timestamp in seconds'),
  defineMetric(ServerMetric.BackupTotal, 'gauge', 'Current number of existent backups', []),
  bySchedule(ServerMetric.BackupAttemptTotal, 'counter', 'Total number of attempted backups'),
  bySchedule(ServerMetric.BackupSuccessTotal, 'counter', 'Total number of successful backups'),
  bySchedule(ServerMetric.BackupPartialFailureTotal, 'counter', 'Total number of partially failed backups'),
  bySchedule(ServerMetric.BackupFailureTotal, 'counter', 'Total number of failed backups'),
  bySchedule(ServerMetric.BackupValidationFailureTotal, 'counter', 'Total number of validation failed backups'),
  bySchedule(ServerMetric.BackupDeletionAttemptTotal, 'counter', 'Total number of attempted backup deletions'),
  bySchedule(ServerMetric.BackupDeletionSuccessTotal, 'counter', 'Total number of successful backup deletions'),
  bySchedule(ServerMetric.BackupDeletionFailureTotal, 'counter', 'Total number of failed backup deletions'),
  bySchedule(ServerMetric.BackupDurationSeconds, 'histogram', 'Time taken to complete backup, in seconds'),
  bySchedule(ServerMetric.BackupItemsTotal, 'gauge', 'Total number of items backed up'),
  bySchedule(ServerMetric.BackupItemsErrors, 'gauge', 'Total number of errors encountered during backup'),
  bySchedule(ServerMetric.BackupWarningTotal, 'counter', 'Total number of warned backups'),
  bySchedule(ServerMetric.BackupLastStatus, 'gauge', 'Last status of the backup. A value of 1 is success, 0 is failure'),
  defineMetric(ServerMetric.BackupLocationStatus, 'gauge', 'The status of backup location.  A value of 1 is available, 0 is unavailable', [LOCATION_LABEL]),
  defineMetric(ServerMetric.RestoreTotal, 'gauge', 'Current number of existent restores', []),
  bySchedule(ServerMetric.RestoreAttemptTotal, 'counter', 'Total number of attempted restores'),
  bySchedule(ServerMetric.RestoreSuccessTotal, 'counter', 'Total number of successful restores'),
  bySchedule(ServerMetric.RestorePartialFailureTotal, 'counter', 'Total number of partially failed restores'),
  bySchedule(ServerMetric.RestoreFailedTotal, 'counter', 'Total number of failed restores'),
  bySchedule(ServerMetric.RestoreValidationFailedTotal, 'counter', 'Total number of failed restores failing validations'),
  bySchedule(ServerMetric.VolumeSnapshotAttemptTotal, 'counter', 'Total number of attempted volume snapshots'),
  bySchedule(ServerMetric.VolumeSnapshotSuccessTotal, 'counter', 'Total number of successful volume snapshots'),
  bySchedule(ServerMetric.VolumeSnapshotFailureTotal, 'counter', 'Total number of failed volume snapshots'),
  byCsiBackup(ServerMetric.CsiSnapshotAttemptTotal, 'Total number of CSI attempted volume snapshots'),
  byCsiBackup(ServerMetric.CsiSnapshotSuccessTotal, 'Total number of CSI successful volume snapshots'),
  byCsiBackup(ServerMetric.CsiSnapshotFailureTotal, 'Total number of CSI failed volume snapshots'),
  byRepository(ServerMetric.RepositoryMaintenanceSuccessTotal, 'counter', 'Total number of successful backup repository maintenance runs'),
  byRepository(ServerMetric.RepositoryMaintenanceFailureTotal, 'counter', 'Total number of failed backup repository maintenance runs'),
  byRepository(ServerMetric.RepositoryMaintenanceDuration, 'histogram', 'Time taken by backup repository maintenance runs, in seconds'),
  byRepository(ServerMetric.RepositorySizeBytes, 'gauge', 'Bytes a backup repository holds in its storage location after its last successful maintenance'),
];

/** The series Velero's InitSchedule makes appear for a schedule ('' at server start): counters at 0, last status 1. */
export const SCHEDULE_INIT_METRICS: readonly ServerMetric[] = [
  ServerMetric.BackupAttemptTotal,
  ServerMetric.BackupSuccessTotal,
  ServerMetric.BackupPartialFailureTotal,
  ServerMetric.BackupFailureTotal,
  ServerMetric.BackupValidationFailureTotal,
  ServerMetric.BackupDeletionAttemptTotal,
  ServerMetric.BackupDeletionSuccessTotal,
  ServerMetric.BackupDeletionFailureTotal,
  ServerMetric.BackupItemsTotal,
  ServerMetric.BackupItemsErrors,
  ServerMetric.BackupWarningTotal,
  ServerMetric.BackupLastStatus,
  ServerMetric.RestoreAttemptTotal,
  ServerMetric.RestorePartialFailureTotal,
  ServerMetric.RestoreFailedTotal,
  ServerMetric.RestoreSuccessTotal,
  ServerMetric.RestoreValidationFailedTotal,
  ServerMetric.VolumeSnapshotSuccessTotal,
  ServerMetric.VolumeSnapshotAttemptTotal,
  ServerMetric.VolumeSnapshotFailureTotal,
];

/** Everything a schedule's series are removed from when it is deleted (Velero's RemoveSchedule). */
export const SCHEDULE_REMOVE_METRICS: readonly ServerMetric[] = [
  ...SCHEDULE_INIT_METRICS,
  ServerMetric.BackupTarballSizeBytes,
  ServerMetric.BackupDurationSeconds,
  ServerMetric.BackupLastSuccessfulTimestamp,
];
