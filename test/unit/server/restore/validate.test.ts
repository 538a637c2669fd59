import { describe, expect, it } from 'vitest';
import { BackupPhase, newBackup, newBackupStorageLocation, newRestore, type Backup, type Restore } from '../../../../src/api/index.js';
import { validateRestore } from '../../../../src/server/restore/validate.js';

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

  it('needs exactly one source, and says schedules are not supported yet', () => {
    expect(validateRestore({ restore: restore({}), backup: undefined, location })).toEqual([
      'Either a backup or schedule must be specified as a source for the restore, but not both',
    ]);
    expect(validateRestore({ restore: restore({ backupName: 'b', scheduleName: 's' }), backup: backup(BackupPhase.Completed), location })[0]).toBe(
      'Either a backup or schedule must be specified as a source for the restore, but not both',
    );
    expect(validateRestore({ restore: restore({ scheduleName: 's' }), backup: undefined, location })).toEqual([
      'restoring from a schedule (spec.scheduleName) is not supported yet; name the backup in spec.backupName',
    ]);
  });

  it('names a missing backup and an unavailable location', () => {
    expect(validateRestore({ restore: restore({ backupName: 'gone' }), backup: undefined, location })).toEqual(['backup "gone" does not exist']);
    const down = { ...location, status: { phase: 'Unavailable' as const } };
    expect(validateRestore({ restore: restore({ backupName: 'b' }), backup: backup(BackupPhase.Completed), location: down })).toEqual([
      'The BSL default is unavailable, cannot retrieve the backup',
    ]);
  });
});
