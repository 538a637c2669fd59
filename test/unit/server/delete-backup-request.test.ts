import { describe, expect, it } from 'vitest';
import { newBackup, newRestore, type Backup } from '../../../src/api/index.js';
import { deletionRefusal, restoresOfBackup } from '../../../src/server/delete-backup-request-controller.js';

const backup = (phase: string) => ({ ...newBackup({ name: 'b1', spec: { storageLocation: 'default' } }), status: { phase } }) as Backup;
const rw = { spec: {} };

describe('deletionRefusal', () => {
  it('refuses with Velero wording when the backup is missing or still running', () => {
    expect(deletionRefusal({ backup: undefined, location: rw, locationName: 'default' })).toBe('backup not found');
    expect(deletionRefusal({ backup: backup('InProgress'), location: rw, locationName: 'default' })).toBe('backup is still in progress');
    expect(deletionRefusal({ backup: backup('Finalizing'), location: rw, locationName: 'default' })).toBe('backup is still in progress');
  });

  it('refuses when the location is missing or read-only', () => {
    expect(deletionRefusal({ backup: backup('Completed'), location: undefined, locationName: 'gone' })).toBe('backup storage location gone not found');
    expect(deletionRefusal({ backup: backup('Completed'), location: { spec: { accessMode: 'ReadOnly' } }, locationName: 'ro' })).toBe(
      'cannot delete backup because backup storage location ro is currently in read-only mode',
    );
  });

  it('lets finished, failed and half-deleted backups be deleted', () => {
    for (const phase of ['Completed', 'PartiallyFailed', 'Failed', 'FailedValidation', 'Deleting', 'New']) {
      expect(deletionRefusal({ backup: backup(phase), location: rw, locationName: 'default' })).toBeUndefined();
    }
  });
});

describe('restoresOfBackup', () => {
  it('finds the restores made from the backup', () => {
    const restores = [newRestore({ name: 'r1', spec: { backupName: 'b1' } }), newRestore({ name: 'r2', spec: { backupName: 'b2' } }), newRestore({ name: 'r3', spec: { backupName: 'b1' } })];
    expect(restoresOfBackup(restores, 'b1')).toEqual(['r1', 'r3']);
  });
});
