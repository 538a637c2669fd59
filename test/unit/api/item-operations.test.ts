import { describe, expect, it } from 'vitest';
import { OperationPhase, ValidationError, parseBackupOperations, parseRestoreOperations } from '../../../src/api/index.js';

const pvc = { Group: '', Resource: 'persistentvolumeclaims', Namespace: 'app', Name: 'data' };

describe('item-operation files', () => {
  it('parse a backup operation list as Velero writes it (capitalised resource identifier keys)', () => {
    const ops = [
      {
        spec: {
          backupName: 'b1',
          backupUID: 'uid',
          backupItemAction: 'velero.io/csi-pvc-backupper',
          resourceIdentifier: pvc,
          operationID: 'du-1234',
          postOperationItems: null,
        },
        status: { phase: 'InProgress', nCompleted: 10, nTotal: 100, operationUnits: 'Bytes', created: '2025-03-04T05:06:07Z' },
      },
    ];
    const parsed = parseBackupOperations(ops);
    expect(parsed[0]?.status.phase).toBe(OperationPhase.InProgress);
    expect(parsed[0]?.spec.resourceIdentifier.Resource).toBe('persistentvolumeclaims');
  });

  it('treat null (no operations) as an empty list', () => {
    expect(parseBackupOperations(null)).toEqual([]);
    expect(parseRestoreOperations(null)).toEqual([]);
  });

  it('name the bad field', () => {
    const bad = [{ spec: { restoreName: 'r', restoreUID: 'u', restoreItemAction: 'a', resourceIdentifier: { ...pvc, Name: 3 }, operationID: 'dd-1' }, status: {} }];
    expect(() => parseRestoreOperations(bad)).toThrow(ValidationError);
    expect(() => parseRestoreOperations(bad)).toThrow('RestoreOperation list: [0].spec.resourceIdentifier.Name: expected string, got 3');
  });
});
