import { describe, expect, it } from 'vitest';
import { addErrors, ownedByOperations } from '../../../../src/server/backup/backup-operations-controller.js';

describe('backup operations controller', () => {
  it('owns waiting backups, and finalizing ones only when they have PVBs', () => {
    expect(ownedByOperations({ status: { phase: 'WaitingForPluginOperations' } })).toBe(true);
    expect(ownedByOperations({ status: { phase: 'WaitingForPluginOperationsPartiallyFailed' } })).toBe(true);
    expect(ownedByOperations({ status: { phase: 'Finalizing', backupItemOperationsAttempted: 2 } })).toBe(true);
    expect(ownedByOperations({ status: { phase: 'FinalizingPartiallyFailed', backupItemOperationsAttempted: 1 } })).toBe(true);
    // A resource-only backup left Finalizing by a stopped server is the backup controller's to run again.
    expect(ownedByOperations({ status: { phase: 'Finalizing' } })).toBe(false);
    expect(ownedByOperations({ status: { phase: 'InProgress', backupItemOperationsAttempted: 2 } })).toBe(false);
    expect(ownedByOperations({ status: { phase: 'Completed', backupItemOperationsAttempted: 2 } })).toBe(false);
    // Still being uploaded by the backup controller (or left so by a server that died mid-upload): not tracked yet.
    expect(ownedByOperations({ metadata: { annotations: { 'backup.cairn.io/uploading': 'true' } }, status: { phase: 'WaitingForPluginOperations' } })).toBe(false);
  });

  it('adds PVB errors to the results once, however often the finalization runs', () => {
    const stored = { warnings: { namespaces: { app: ['w'] } }, errors: { namespaces: { app: ['item error'] } } };
    const errors = [{ namespace: 'app', message: 'pod volume backup failed: boom' }, { message: 'timed out waiting for all PodVolumeBackups to complete' }];
    const once = addErrors(stored, errors);
    expect(once).toEqual({
      warnings: { namespaces: { app: ['w'] } },
      errors: { namespaces: { app: ['item error', 'pod volume backup failed: boom'] }, velero: ['timed out waiting for all PodVolumeBackups to complete'] },
    });
    expect(addErrors(once, errors)).toEqual(once);
    expect(stored.errors.namespaces.app).toEqual(['item error']);
  });
});
