import { describe, expect, it } from 'vitest';
import { BackupPhase, newBackup, newBackupStorageLocation, newRestore, type Backup, type Restore } from '../../../../src/api/index.js';
import { backupOfSchedule, validateRestore } from '../../../../src/server/restore/validate.js';

const backup = (phase: Backup['status'] extends infer S ? (S extends { phase?: infer P } ? P : never) : never): Backup => ({
  ...newBackup({ name: 'b', spec: { storageLocation: 'default' } }),
  status: { phase },
});
const location = newBackupStorageLocation({ name: 'default', spec: { provider: 'aws', objectStorage: { bucket: 'x' } } });
const restore = (spec: Restore['spec']) => newRestore({ name: 'r', spec });

describe('restore validation', () => {
  it('accepts a restore from a Completed or PartiallyFailed backup', () => {
    expect(validateRestore({ restore: restore({ backupName: 'b' }), backup: backup(BackupPhase.Completed), location })).toEqual([]);
    expect(validateRestore({ restore: restore({ backupName: 'b' }), backup: backup(BackupPhase.PartiallyFailed), location })).toEqual([]);
  });

  it('lists every problem at once', () => {
    expect(validateRestore({ restore: restore({ backupName: 'b', existingResourcePolicy: 'replace', namespaceMapping: { a: 'B' } }), backup: backup(BackupPhase.InProgress), location: undefined })).toEqual([
      'Invalid ExistingResourcePolicy: replace',
      'invalid namespace mapping target "B": not a valid namespace name',
      'backup "b" is in phase InProgress; only Completed or PartiallyFailed backups can be restored',
      'the storage location "default" of backup "b" does not exist',
    ]);
  });

  it('needs exactly one source', () => {
    expect(validateRestore({ restore: restore({}), backup: undefined, location })).toEqual([
      'Either a backup or schedule must be specified as a source for the restore, but not both',
    ]);
    expect(validateRestore({ restore: restore({ backupName: 'b', scheduleName: 's' }), backup: backup(BackupPhase.Completed), location })[0]).toBe(
      'Either a backup or schedule must be specified as a source for the restore, but not both',
    );
  });

  it('restores from a schedule through the backup chosen for it', () => {
    expect(validateRestore({ restore: restore({ scheduleName: 's' }), backup: backup(BackupPhase.Completed), backupName: 'b', location })).toEqual([]);
    expect(validateRestore({ restore: restore({ scheduleName: 's' }), backup: undefined, backupName: 'gone', location })).toEqual(['backup "gone" does not exist']);
  });

  it("picks the schedule's Completed backup that started last", () => {
    const made = (name: string, phase: BackupPhase, start: string): Backup => ({ ...newBackup({ name, spec: {} }), status: { phase, startTimestamp: start } });
    expect(backupOfSchedule([])).toEqual({ problem: 'No backups found for schedule' });
    expect(backupOfSchedule([made('a', BackupPhase.PartiallyFailed, '2026-03-01T01:00:00Z'), made('b', BackupPhase.InProgress, '2026-03-01T02:00:00Z')])).toEqual({
      problem: 'No completed backups found for schedule',
    });
    expect(
      backupOfSchedule([
        made('s-1', BackupPhase.Completed, '2026-03-01T01:00:00Z'),
        made('s-3', BackupPhase.PartiallyFailed, '2026-03-01T03:00:00Z'),
        made('s-2', BackupPhase.Completed, '2026-03-01T02:00:00Z'),
        made('s-4', BackupPhase.InProgress, '2026-03-01T04:00:00Z'),
      ]),
    ).toEqual({ backupName: 's-2' });
  });

  it('accepts spec.resourceModifier (its ConfigMap is read and checked by the controller)', () => {
    const problems = validateRestore({ restore: restore({ backupName: 'b', resourceModifier: { kind: 'configmap', name: 'mods' } }), backup: backup(BackupPhase.Completed), location });
    expect(problems).toEqual([]);
  });

  it('names a missing backup and an unavailable location', () => {
    expect(validateRestore({ restore: restore({ backupName: 'gone' }), backup: undefined, location })).toEqual(['backup "gone" does not exist']);
    const down = { ...location, status: { phase: 'Unavailable' as const } };
    expect(validateRestore({ restore: restore({ backupName: 'b' }), backup: backup(BackupPhase.Completed), location: down })).toEqual([
      'The BSL default is unavailable, cannot retrieve the backup',
    ]);
  });
});
