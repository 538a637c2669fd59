import { describe, expect, it } from 'vitest';
import type { Backup, DataUpload } from '../../../../src/api/index.js';
import type { BackupVolumeInfo } from '../../../../src/api/volume-info.js';
import { describePlainBackup, textBetween } from './fixtures.js';

function backup(phase: string): Backup {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Backup',
    metadata: { name: 'db-backup', namespace: 'velero', uid: 'b-uid' },
    spec: { includedNamespaces: ['db'], storageLocation: 'default', ttl: '720h0m0s', snapshotMoveData: true, defaultVolumesToFsBackup: false },
    status: { formatVersion: '1.1.0', phase, startTimestamp: '2025-10-01T10:00:00Z', progress: { totalItems: 20, itemsBackedUp: 20 }, hookStatus: {} },
  } as Backup;
}

const OP = 'du-b-uid.pvc-uid';

function entry(over: Partial<BackupVolumeInfo> = {}, phase = 'Completed', size = 10737418240): BackupVolumeInfo {
  return {
    pvcName: 'data',
    pvcNamespace: 'db',
    pvName: 'pvc-1',
    backupMethod: 'CSISnapshot',
    snapshotDataMoved: true,
    preserveLocalSnapshot: false,
    skipped: false,
    result: 'succeeded',
    csiSnapshotInfo: { snapshotHandle: 'snap-1', size: 0, driver: 'hostpath.csi.k8s.io', vscName: 'snapcontent-1', ReadyToUse: true },
    snapshotDataMovementInfo: { dataMover: 'velero', uploaderType: 'kopia', snapshotHandle: 'k1', operationID: OP, size, Phase: phase },
    ...over,
  };
}

function dataUpload(status: DataUpload['status']): DataUpload {
  return {
    apiVersion: 'velero.io/v2alpha1',
    kind: 'DataUpload',
    metadata: { name: 'db-backup-x7k2p', namespace: 'velero', labels: { 'velero.io/backup-uid': 'b-uid', 'velero.io/async-operation-id': OP } },
    spec: { snapshotType: 'CSI', csiSnapshot: { volumeSnapshot: 'velero-data-abcde', storageClass: 'csi-hostpath-sc', driver: 'hostpath.csi.k8s.io' }, sourcePVC: 'data', sourceNamespace: 'db', backupStorageLocation: 'default', datamover: 'velero', operationTimeout: '4h0m0s' },
    ...(status ? { status } : {}),
  } as DataUpload;
}

function csiSection(text: string): string {
  return textBetween(text, '  CSI Snapshots', '  Pod Volume Backups');
}

describe('backup describe: data-moved volumes', () => {
  it("without --details: Velero's one line per volume", () => {
    const text = describePlainBackup({ backup: backup('Completed'), details: false, volumeInfo: { ok: true, value: [entry()] } });
    expect(csiSection(text)).toBe(`  CSI Snapshots:
    db/data:
      Data Movement: included, specify --details for more information

`);
  });

  it("with --details: Velero's Data Movement block (stored volume info once the DataUploads are gone)", () => {
    const text = describePlainBackup({ backup: backup('Completed'), details: true, volumeInfo: { ok: true, value: [entry()] }, dataUploads: [] });
    expect(csiSection(text)).toBe(`  CSI Snapshots:
    db/data:
      Data Movement:
        Operation ID: ${OP}
        Data Mover: velero
        Uploader Type: kopia
        Moved data Size (bytes): 10737418240
        Result: succeeded

`);
  });

  it('a failed volume, data mover left empty, shows velero and the result', () => {
    const failed = entry({ result: 'failed', snapshotDataMovementInfo: { dataMover: '', uploaderType: 'kopia', snapshotHandle: '', operationID: OP, size: 100, Phase: 'Failed' } });
    const text = describePlainBackup({ backup: backup('PartiallyFailed'), details: true, volumeInfo: { ok: true, value: [failed] } });
    expect(csiSection(text)).toContain('        Data Mover: velero\n        Uploader Type: kopia\n        Moved data Size (bytes): 100\n        Result: failed\n');
  });

  it('while the backup waits: the live DataUpload phase, node and progress', () => {
    const waiting = entry({ result: undefined, snapshotDataMovementInfo: { dataMover: 'velero', uploaderType: 'kopia', snapshotHandle: '', operationID: OP, size: 0, Phase: '' } });
    delete waiting.result;
    const du = dataUpload({ phase: 'InProgress', node: 'node-2', acceptedByNode: 'node-2', progress: { totalBytes: 4096, bytesDone: 1024 } });
    const text = describePlainBackup({ backup: backup('WaitingForPluginOperations'), details: true, volumeInfo: { ok: true, value: [waiting] }, dataUploads: [du] });
    expect(csiSection(text)).toBe(`  CSI Snapshots:
    db/data:
      Data Movement:
        Operation ID: ${OP}
        Data Mover: velero
        Uploader Type: kopia
        Moved data Size (bytes): 4096
        Result: 
        Data Upload: db-backup-x7k2p
        Phase: In Progress
        Node: node-2
        Progress: 1024 of 4096 bytes (25%)

`);
  });

  it('a DataUpload not in the stored volume info yet is listed from the cluster; a failed one shows its message', () => {
    const du = dataUpload({ phase: 'Failed', node: 'node-1', message: 'snapshot was not ready in time' });
    const text = describePlainBackup({ backup: backup('WaitingForPluginOperationsPartiallyFailed'), details: true, volumeInfo: { ok: true, value: [] }, dataUploads: [du] });
    const section = csiSection(text);
    expect(section).toContain('    db/data:\n      Data Movement:\n');
    expect(section).toContain('        Result: failed\n        Data Upload: db-backup-x7k2p\n        Phase: Failed\n        Node: node-1\n        Message: snapshot was not ready in time\n');
  });

  it('no data-moved volumes: <none included>', () => {
    const text = describePlainBackup({ backup: backup('Completed'), details: true, volumeInfo: { ok: true, value: [] } });
    expect(csiSection(text)).toBe('  CSI Snapshots: <none included>\n\n');
  });
});
