import { describe, expect, it } from 'vitest';
import { newBackupStorageLocation, newDeleteBackupRequest, type Backup, type BackupPhase, type DeleteBackupRequest } from '../../../src/api/index.js';
import type { MetricEffect } from '../../../src/base/metrics.js';
import { ServerMetric } from '../../../src/server/metrics/definitions.js';
import {
  backupTransitionEffects,
  deleteRequestTransitionEffects,
  gaugesAtStart,
  locationEffects,
  maintenanceEffects,
  repositoryRemoveEffects,
  restoreTransitionEffects,
  scheduleInitEffects,
  scheduleRemoveEffects,
  tarballSizeEffects,
} from '../../../src/server/metrics/metrics-decisions.js';
import { backup, restore } from '../../support/builders.js';

const now = new Date('2026-03-01T12:00:00Z');
const manual = { schedule: '' };
const daily = { schedule: 'daily' };

/** Counter names an effect list increments (with their amounts), the way the tables read. */
function counted(effects: MetricEffect[]): string[] {
  return effects.filter((e) => e.op === 'inc' && (e.value ?? 1) > 0).map((e) => `${e.metric}{${Object.values(e.labels).join(',')}}${(e as { value?: number }).value && (e as { value?: number }).value !== 1 ? `+${(e as { value?: number }).value}` : ''}`);
}

function finished(phase: BackupPhase, schedule?: string): Backup {
  const b = backup('b1').phase(phase).status({
    startTimestamp: '2026-03-01T11:50:00Z',
    completionTimestamp: '2026-03-01T11:52:30.600Z',
    progress: { totalItems: 42, itemsBackedUp: 42 },
    errors: phase === 'PartiallyFailed' ? 2 : 0,
    warnings: 1,
  });
  return (schedule ? b.label('velero.io/schedule-name', schedule) : b).build();
}

describe('backupTransitionEffects: which counter moves for which observed backup change', () => {
  const cases: { name: string; prev: string | undefined; next: Backup; counters: string[] }[] = [
    { name: 'first sight of a finished backup (server start, sync) counts nothing', prev: undefined, next: finished('Completed'), counters: [] },
    { name: 'first sight of a new backup counts nothing yet', prev: undefined, next: backup('b1').build(), counters: [] },
    { name: 'New → InProgress is an attempt', prev: 'New', next: backup('b1').phase('InProgress').build(), counters: ['velero_backup_attempt_total{}'] },
    { name: "'' → InProgress is an attempt", prev: '', next: backup('b1').phase('InProgress').build(), counters: ['velero_backup_attempt_total{}'] },
    { name: 'a scheduled attempt carries the schedule label', prev: 'New', next: backup('b1').phase('InProgress').label('velero.io/schedule-name', 'daily').build(), counters: ['velero_backup_attempt_total{daily}'] },
    { name: 'New → FailedValidation is a validation failure, no attempt', prev: 'New', next: backup('b1').phase('FailedValidation').build(), counters: ['velero_backup_validation_failure_total{}'] },
    { name: 'InProgress → Completed is a success', prev: 'InProgress', next: finished('Completed'), counters: ['velero_backup_success_total{}', 'velero_backup_warning_total{}'] },
    { name: 'Finalizing → Completed is a success', prev: 'Finalizing', next: finished('Completed', 'daily'), counters: ['velero_backup_success_total{daily}', 'velero_backup_warning_total{daily}'] },
    { name: 'WaitingForPluginOperations → PartiallyFailed is a partial failure', prev: 'WaitingForPluginOperations', next: finished('PartiallyFailed'), counters: ['velero_backup_partial_failure_total{}', 'velero_backup_warning_total{}'] },
    { name: 'InProgress → Failed is a failure', prev: 'InProgress', next: finished('Failed'), counters: ['velero_backup_failure_total{}', 'velero_backup_warning_total{}'] },
    { name: 'New → Failed (InProgress not seen) is an attempt and a failure', prev: 'New', next: finished('Failed'), counters: ['velero_backup_attempt_total{}', 'velero_backup_failure_total{}', 'velero_backup_warning_total{}'] },
    { name: 'InProgress → Finalizing counts nothing', prev: 'InProgress', next: backup('b1').phase('Finalizing').build(), counters: [] },
    { name: 'Finalizing → InProgress (a restarted run) counts nothing', prev: 'Finalizing', next: backup('b1').phase('InProgress').build(), counters: [] },
    { name: 'Completed → Deleting counts nothing', prev: 'Completed', next: backup('b1').phase('Deleting').build(), counters: [] },
    { name: 'Completed → Completed (a status update) counts nothing', prev: 'Completed', next: finished('Completed'), counters: [] },
    { name: 'New → New counts nothing', prev: '', next: backup('b1').phase('New').build(), counters: [] },
    { name: 'New → Canceled (canceled before it ran) is no attempt', prev: 'New', next: backup('b1').phase('Canceled').build(), counters: [] },
    { name: 'InProgress → Canceling → Canceled counts no outcome', prev: 'Canceling', next: backup('b1').phase('Canceled').build(), counters: [] },
    { name: 'Canceled → Deleting counts nothing', prev: 'Canceled', next: backup('b1').phase('Deleting').build(), counters: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(counted(backupTransitionEffects(c.prev, c.next, now))).toEqual(c.counters);
    });
  }

  it('a success sets last status 1, the last successful timestamp, duration and items', () => {
    const effects = backupTransitionEffects('InProgress', finished('Completed', 'daily'), now);
    expect(effects).toContainEqual({ op: 'set', metric: ServerMetric.BackupLastStatus, labels: daily, value: 1 });
    expect(effects).toContainEqual({ op: 'set', metric: ServerMetric.BackupLastSuccessfulTimestamp, labels: daily, value: Date.parse('2026-03-01T11:52:30Z') / 1000 });
    // Whole seconds, as Velero truncates the duration.
    expect(effects).toContainEqual({ op: 'observe', metric: ServerMetric.BackupDurationSeconds, labels: daily, value: 150 });
    expect(effects).toContainEqual({ op: 'set', metric: ServerMetric.BackupItemsTotal, labels: daily, value: 42 });
    expect(effects).toContainEqual({ op: 'set', metric: ServerMetric.BackupItemsErrors, labels: daily, value: 0 });
  });

  it('a failure and a validation failure set last status 0 and leave the last successful timestamp', () => {
    for (const effects of [backupTransitionEffects('InProgress', finished('Failed'), now), backupTransitionEffects('New', backup('b1').phase('FailedValidation').build(), now)]) {
      expect(effects).toContainEqual({ op: 'set', metric: ServerMetric.BackupLastStatus, labels: manual, value: 0 });
      expect(effects.some((e) => e.metric === ServerMetric.BackupLastSuccessfulTimestamp)).toBe(false);
    }
  });

  it('a success without completion time uses the time it was seen', () => {
    const effects = backupTransitionEffects('InProgress', backup('b1').phase('Completed').build(), now);
    expect(effects).toContainEqual({ op: 'set', metric: ServerMetric.BackupLastSuccessfulTimestamp, labels: manual, value: now.getTime() / 1000 });
    expect(effects.some((e) => e.op === 'observe')).toBe(false);
  });

  it('CSI snapshot counts go per backup name, only for backups that took some', () => {
    const csi = backup('b1').phase('Completed').status({ csiVolumeSnapshotsAttempted: 3, csiVolumeSnapshotsCompleted: 2 }).build();
    const labels = { schedule: '', backupName: 'b1' };
    expect(backupTransitionEffects('InProgress', csi, now)).toEqual(
      expect.arrayContaining([
        { op: 'inc', metric: ServerMetric.CsiSnapshotAttemptTotal, labels, value: 3 },
        { op: 'inc', metric: ServerMetric.CsiSnapshotSuccessTotal, labels, value: 2 },
        { op: 'inc', metric: ServerMetric.CsiSnapshotFailureTotal, labels, value: 1 },
      ]),
    );
    expect(backupTransitionEffects('InProgress', finished('Completed'), now).some((e) => e.metric.startsWith('velero_csi_'))).toBe(false);
  });

  it('volume snapshot counts are added at the end, as Velero', () => {
    const b = backup('b1').phase('Completed').status({ volumeSnapshotsAttempted: 2, volumeSnapshotsCompleted: 1 }).build();
    expect(counted(backupTransitionEffects('InProgress', b, now))).toEqual([
      'velero_backup_success_total{}',
      'velero_volume_snapshot_attempt_total{}+2',
      'velero_volume_snapshot_success_total{}',
      'velero_volume_snapshot_failure_total{}',
    ]);
  });
});

describe('restoreTransitionEffects', () => {
  const cases: { name: string; prev: string | undefined; phase: string; counters: string[] }[] = [
    { name: 'first sight counts nothing', prev: undefined, phase: 'Completed', counters: [] },
    { name: 'New → InProgress is an attempt', prev: 'New', phase: 'InProgress', counters: ['velero_restore_attempt_total{}'] },
    { name: 'New → FailedValidation is an attempt and a validation failure (Velero counts the attempt first)', prev: '', phase: 'FailedValidation', counters: ['velero_restore_attempt_total{}', 'velero_restore_validation_failed_total{}'] },
    { name: 'Finalizing → Completed is a success', prev: 'Finalizing', phase: 'Completed', counters: ['velero_restore_success_total{}'] },
    { name: 'FinalizingPartiallyFailed → PartiallyFailed is a partial failure', prev: 'FinalizingPartiallyFailed', phase: 'PartiallyFailed', counters: ['velero_restore_partial_failure_total{}'] },
    { name: 'InProgress → Failed is a failure', prev: 'InProgress', phase: 'Failed', counters: ['velero_restore_failed_total{}'] },
    { name: 'Completed → Completed counts nothing', prev: 'Completed', phase: 'Completed', counters: [] },
    { name: 'New → Canceled is no attempt', prev: 'New', phase: 'Canceled', counters: [] },
    { name: 'Canceling → Canceled counts nothing', prev: 'Canceling', phase: 'Canceled', counters: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(counted(restoreTransitionEffects(c.prev, restore('r1').phase(c.phase as never).build()))).toEqual(c.counters);
    });
  }

  it('the schedule label is the restore spec.scheduleName', () => {
    expect(counted(restoreTransitionEffects('New', restore('r1').spec({ scheduleName: 'daily' }).phase('InProgress').build()))).toEqual(['velero_restore_attempt_total{daily}']);
  });
});

describe('deleteRequestTransitionEffects', () => {
  const request = (phase: 'New' | 'InProgress' | 'Processed', errors?: string[]): DeleteBackupRequest => ({
    ...newDeleteBackupRequest({ name: 'b1-x', spec: { backupName: 'b1' } }),
    status: { phase, ...(errors ? { errors } : {}) },
  });
  const cases: { name: string; prev: string | undefined; next: DeleteBackupRequest; counters: string[] }[] = [
    { name: 'first sight counts nothing', prev: undefined, next: request('Processed'), counters: [] },
    { name: 'New → InProgress is an attempt', prev: 'New', next: request('InProgress'), counters: ['velero_backup_deletion_attempt_total{daily}'] },
    { name: 'InProgress → Processed without errors is a success', prev: 'InProgress', next: request('Processed'), counters: ['velero_backup_deletion_success_total{daily}'] },
    { name: 'InProgress → Processed with errors is a failure', prev: 'InProgress', next: request('Processed', ['boom']), counters: ['velero_backup_deletion_failure_total{daily}'] },
    { name: 'New → Processed (refused: no backup, read-only location) counts nothing', prev: 'New', next: request('Processed', ['backup not found']), counters: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(counted(deleteRequestTransitionEffects(c.prev, c.next, 'daily'))).toEqual(c.counters);
    });
  }
});

describe('gauges', () => {
  it('the location status follows its phase and goes with it', () => {
    const loc = (phase?: 'Available' | 'Unavailable') => ({ ...newBackupStorageLocation({ name: 'default', spec: { provider: 'aws', objectStorage: { bucket: 'b' } } }), ...(phase ? { status: { phase } } : {}) });
    const labels = { backup_location_name: 'default' };
    expect(locationEffects('default', loc('Available'))).toEqual([{ op: 'set', metric: ServerMetric.BackupLocationStatus, labels, value: 1 }]);
    expect(locationEffects('default', loc('Unavailable'))).toEqual([{ op: 'set', metric: ServerMetric.BackupLocationStatus, labels, value: 0 }]);
    expect(locationEffects('default', loc())).toEqual([]);
    expect(locationEffects('default', undefined)).toEqual([{ op: 'remove', metric: ServerMetric.BackupLocationStatus, labels }]);
  });

  it('at start: newest success per schedule, and whether the newest finished backup succeeded', () => {
    const at = (name: string, phase: BackupPhase, completed: string, schedule?: string) => {
      const b = backup(name).phase(phase).status({ completionTimestamp: completed });
      return (schedule ? b.label('velero.io/schedule-name', schedule) : b).build();
    };
    const effects = gaugesAtStart([
      at('m1', 'Completed', '2026-02-01T00:00:00Z'),
      at('m2', 'Failed', '2026-02-02T00:00:00Z'),
      at('d1', 'Completed', '2026-02-03T00:00:00Z', 'daily'),
      at('d0', 'PartiallyFailed', '2026-02-01T00:00:00Z', 'daily'),
      at('running', 'InProgress', '2026-02-05T00:00:00Z', 'daily'),
    ]);
    expect(effects).toEqual([
      { op: 'setMax', metric: ServerMetric.BackupLastSuccessfulTimestamp, labels: manual, value: Date.parse('2026-02-01T00:00:00Z') / 1000 },
      { op: 'setMax', metric: ServerMetric.BackupLastSuccessfulTimestamp, labels: daily, value: Date.parse('2026-02-03T00:00:00Z') / 1000 },
      { op: 'set', metric: ServerMetric.BackupLastStatus, labels: manual, value: 0 },
      { op: 'set', metric: ServerMetric.BackupLastStatus, labels: daily, value: 1 },
    ]);
  });

  it('a schedule seen makes its series appear (last status 1), a deleted one removes them', () => {
    const init = scheduleInitEffects('daily');
    expect(init).toContainEqual({ op: 'init', metric: ServerMetric.BackupAttemptTotal, labels: daily });
    expect(init).toContainEqual({ op: 'init', metric: ServerMetric.BackupLastStatus, labels: daily, value: 1 });
    expect(scheduleRemoveEffects('daily')).toContainEqual({ op: 'remove', metric: ServerMetric.BackupDurationSeconds, labels: daily });
  });

  it('the tarball size goes by schedule', () => {
    expect(tarballSizeEffects(backup('b1').label('velero.io/schedule-name', 'daily').build(), 1234)).toEqual([{ op: 'set', metric: ServerMetric.BackupTarballSizeBytes, labels: daily, value: 1234 }]);
  });
});

describe('repository maintenance', () => {
  const labels = { repository: 'app-default-kopia' };
  it('a successful run counts, observes its duration and sets the size the repository holds', () => {
    expect(maintenanceEffects({ repository: 'app-default-kopia', ok: true, seconds: 12, sizeBytes: 4096 })).toEqual([
      { op: 'inc', metric: ServerMetric.RepositoryMaintenanceSuccessTotal, labels },
      { op: 'observe', metric: ServerMetric.RepositoryMaintenanceDuration, labels, value: 12 },
      { op: 'set', metric: ServerMetric.RepositorySizeBytes, labels, value: 4096 },
    ]);
  });

  it('a failed run counts a failure and leaves the size', () => {
    expect(maintenanceEffects({ repository: 'app-default-kopia', ok: false, seconds: 3, sizeBytes: 4096 })).toEqual([
      { op: 'inc', metric: ServerMetric.RepositoryMaintenanceFailureTotal, labels },
      { op: 'observe', metric: ServerMetric.RepositoryMaintenanceDuration, labels, value: 3 },
    ]);
  });

  it('a deleted repository takes its series with it', () => {
    expect(repositoryRemoveEffects('app-default-kopia').map((e) => e.metric)).toEqual([
      ServerMetric.RepositoryMaintenanceSuccessTotal,
      ServerMetric.RepositoryMaintenanceFailureTotal,
      ServerMetric.RepositoryMaintenanceDuration,
      ServerMetric.RepositorySizeBytes,
    ]);
  });
});
