import { describe, expect, it } from 'vitest';
import { newDataDownload, newRestore, type DataDownload, type Restore } from '../../../../src/api/index.js';
import {
  dataDownloadOperationId,
  dynamicPvRestoreLabelValue,
  movedVolumeFor,
  rewritePvcForDataDownload,
} from '../../../../src/server/datamover/restore-decision.js';
import { dataDownloadFor } from '../../../../src/server/datamover/restore-objects.js';
import { dataDownloadOperations, restoreVolumeInfoForDataDownload } from '../../../../src/server/datamover/restore-tracking.js';
import { DD_GAVE_UP_ANNOTATION, judgeDataDownload } from '../../../../src/server/datamover/restore-wait.js';
import { decidePv } from '../../../../src/server/restore/pv-policy.js';
import { combineOperations } from '../../../../src/server/restore/restore-finalize.js';
import { movedVolumeInfo } from './moved-volume-info.js';

const RESTORE_UID = '11111111-2222-3333-4444-555555555555';
const PVC_UID = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
const CREATED = '2026-01-01T00:00:00Z';
const at = (seconds: number) => new Date(Date.parse(CREATED) + seconds * 1000);

function restore(spec: Partial<Restore['spec']> = {}): Restore {
  const r = newRestore({ namespace: 'cairn', name: 'r1', spec: { backupName: 'b1', ...spec } });
  r.metadata.uid = RESTORE_UID;
  return r;
}

const moved = movedVolumeInfo({ pvName: 'pvc-1', size: 4096, reclaimPolicy: 'Delete' });

function dd(status?: DataDownload['status'], annotations?: Record<string, string>): DataDownload {
  const d = dataDownloadFor({
    restore: restore({ itemOperationTimeout: '1h0m0s' }),
    backupStorageLocation: 'default',
    moved: movedVolumeFor([moved], 'app', 'data')!,
    targetPvc: { name: 'data', namespace: 'copy' },
    pvcUidFromBackup: PVC_UID,
  });
  d.metadata = { ...d.metadata, name: 'r1-x7k2p', creationTimestamp: CREATED, ...(annotations ? { annotations } : {}) } as DataDownload['metadata'];
  if (status) d.status = status;
  return d;
}

describe('data-mover restore decisions', () => {
  it('a claim has moved data when its backup-time entry says so and names a snapshot', () => {
    expect(movedVolumeFor([moved], 'app', 'data')).toEqual({
      pvcNamespace: 'app',
      pvcName: 'data',
      pvName: 'pvc-1',
      snapshotHandle: 'snap-1',
      dataMover: 'velero',
      uploaderType: 'kopia',
      backupOperationID: 'du-x',
      size: 4096,
    });
    expect(movedVolumeFor([moved], 'copy', 'data')).toBeUndefined();
    expect(movedVolumeFor([{ ...moved, snapshotDataMoved: false }], 'app', 'data')).toBeUndefined();
    expect(movedVolumeFor([{ ...moved, snapshotDataMovementInfo: { ...moved.snapshotDataMovementInfo, snapshotHandle: '' } }], 'app', 'data')).toBeUndefined();
    expect(movedVolumeFor([{ pvcName: 'data', pvcNamespace: 'app', backupMethod: 'PodVolumeBackup' }], 'app', 'data')).toBeUndefined();
  });

  it('the PV of a moved volume is not restored (its claim is provisioned through the DataDownload)', () => {
    const pv = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pvc-1' }, spec: { persistentVolumeReclaimPolicy: 'Retain' } };
    expect(decidePv({ pv, volumeInfos: [moved], exists: false })).toEqual({
      action: 'provision',
      reason: 'its data was moved to the backup storage and is restored into a new volume by a DataDownload',
    });
  });

  it('the operation ID is dd-<restore uid>.<backup-time pvc uid>, cut to a valid label value', () => {
    const id = dataDownloadOperationId(RESTORE_UID, PVC_UID);
    expect(id.length).toBe(63);
    expect(id.startsWith(`dd-${RESTORE_UID}.`)).toBe(true);
    expect(dataDownloadOperationId('u', 'p')).toBe('dd-u.p');
  });

  it('the selector value is <namespace>.<claim>.<5 random characters>, a valid label value even for long names', () => {
    expect(dynamicPvRestoreLabelValue('copy', 'data', 'b2c4d')).toBe('copy.data.b2c4d');
    expect(dynamicPvRestoreLabelValue('copy', 'data')).toMatch(/^copy\.data\.[a-z0-9]{5}$/);
    const long = dynamicPvRestoreLabelValue('n'.repeat(40), 'c'.repeat(40), 'b2c4d');
    expect(long.length).toBe(63);
    expect(long).toMatch(/^[a-z0-9]([-._a-z0-9]*[a-z0-9])?$/);
  });

  it('rewrites the claim: no volume, data source or binding annotations (a mapped selected node stays); a selector on the label', () => {
    const pvc = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'data',
        namespace: 'copy',
        annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes', 'volume.beta.kubernetes.io/storage-provisioner': 'x', 'volume.kubernetes.io/selected-node': 'n1' },
      },
      spec: {
        volumeName: 'pvc-1',
        storageClassName: 'csi-hostpath-sc',
        volumeMode: 'Block',
        dataSource: { kind: 'VolumeSnapshot', name: 's' },
        dataSourceRef: { kind: 'VolumeSnapshot', name: 's' },
        resources: { requests: { storage: '1Gi' } },
      },
    };
    const out = rewritePvcForDataDownload(pvc, 'copy.data.b2c4d');
    expect(out.metadata.annotations).toEqual({ 'volume.kubernetes.io/selected-node': 'n1' });
    const { ['volume.kubernetes.io/selected-node']: _node, ...unpinned } = pvc.metadata.annotations;
    expect(rewritePvcForDataDownload({ ...pvc, metadata: { ...pvc.metadata, annotations: unpinned } }, 'copy.data.b2c4d').metadata.annotations).toBeUndefined();
    expect(out.spec).toEqual({
      storageClassName: 'csi-hostpath-sc',
      volumeMode: 'Block',
      resources: { requests: { storage: '1Gi' } },
      selector: { matchLabels: { 'velero.io/dynamic-pv-restore': 'copy.data.b2c4d' } },
    });
    // The input is left alone.
    expect(pvc.spec.volumeName).toBe('pvc-1');
  });
});

describe('the DataDownload', () => {
  it('follows the contract: generateName, owner, labels, spec with the mapped target and the backup-time source namespace', () => {
    const d = dataDownloadFor({ restore: restore(), backupStorageLocation: 'default', moved: movedVolumeFor([moved], 'app', 'data')!, targetPvc: { name: 'data', namespace: 'copy' }, pvcUidFromBackup: PVC_UID });
    expect(d).toEqual(
      newDataDownload({
        namespace: 'cairn',
        generateName: 'r1-',
        labels: {
          'velero.io/restore-name': 'r1',
          'velero.io/restore-uid': RESTORE_UID,
          'velero.io/async-operation-id': dataDownloadOperationId(RESTORE_UID, PVC_UID),
        },
        ownerReferences: [{ apiVersion: 'velero.io/v1', kind: 'Restore', name: 'r1', uid: RESTORE_UID, controller: true }],
        spec: {
          targetVolume: { pvc: 'data', pv: '', namespace: 'copy' },
          backupStorageLocation: 'default',
          snapshotID: 'snap-1',
          sourceNamespace: 'app',
          datamover: 'velero',
          operationTimeout: '4h0m0s',
        },
      }),
    );
    expect(dd().spec.operationTimeout).toBe('1h0m0s');
  });
});

describe('waiting for DataDownloads', () => {
  const judge = (d: DataDownload, seconds = 1, timeoutMs = 3600_000) => judgeDataDownload({ dd: d, now: at(seconds), operationTimeoutMs: timeoutMs });

  it('waits while it runs, ends on Completed, Failed and Canceled with an error naming the claim', () => {
    expect(judge(dd())).toEqual({ state: 'waiting', why: 'phase New' });
    expect(judge(dd({ phase: 'InProgress' }))).toEqual({ state: 'waiting', why: 'phase InProgress' });
    expect(judge(dd({ phase: 'Completed' }))).toEqual({ state: 'completed' });
    expect(judge(dd({ phase: 'Failed', message: 'restore PVC not bound' }))).toEqual({
      state: 'failed',
      error: 'data download of persistent volume claim copy/data failed (DataDownload r1-x7k2p): restore PVC not bound',
    });
    expect(judge(dd({ phase: 'Canceled', message: 'canceled by user' }))).toEqual({
      state: 'failed',
      error: 'data download of persistent volume claim copy/data canceled (DataDownload r1-x7k2p): canceled by user',
    });
  });

  it('gives up (and cancels) past the item operation timeout; once decided, that is the outcome', () => {
    expect(judge(dd({ phase: 'InProgress' }), 3601)).toEqual({
      state: 'give-up',
      error: 'timed out after 1h0m0s waiting for the data download of persistent volume claim copy/data (DataDownload r1-x7k2p, phase InProgress)',
    });
    expect(judge(dd({ phase: 'Completed' }), 3601)).toEqual({ state: 'completed' });
    expect(judge(dd({ phase: 'Completed' }, { [DD_GAVE_UP_ANNOTATION]: 'timed out' }))).toEqual({ state: 'failed', error: 'timed out' });
  });
});

describe('DataDownloads as restore item operations and volume info', () => {
  it('one operation per DataDownload on its claim, with progress in bytes and the outcome', () => {
    const running = dd({ phase: 'InProgress', startTimestamp: '2026-01-01T00:00:05Z', progress: { totalBytes: 1000, bytesDone: 250 } });
    const failed = dd({ phase: 'Failed', message: 'boom', completionTimestamp: '2026-01-01T00:01:00Z' });
    const ops = dataDownloadOperations(restore(), [running, failed, dd()]);
    expect(ops[0]).toEqual({
      spec: {
        restoreName: 'r1',
        restoreUID: RESTORE_UID,
        restoreItemAction: 'velero.io/csi-pvc-restorer',
        resourceIdentifier: { Group: '', Resource: 'persistentvolumeclaims', Namespace: 'copy', Name: 'data' },
        operationID: dataDownloadOperationId(RESTORE_UID, PVC_UID),
      },
      status: { phase: 'InProgress', nCompleted: 250, nTotal: 1000, operationUnits: 'Bytes', description: 'InProgress', created: CREATED, started: '2026-01-01T00:00:05Z' },
    });
    expect(ops[1]?.status).toMatchObject({ phase: 'Failed', error: 'data download of persistent volume claim copy/data failed (DataDownload r1-x7k2p): boom', updated: '2026-01-01T00:01:00Z' });
    expect(ops[2]?.status).toEqual({ phase: 'New', description: 'New', created: CREATED });
  });

  it('volume info: CSISnapshot, data moved, the snapshot and the restored volume, keys in Velero order', () => {
    const info = restoreVolumeInfoForDataDownload(dd({ phase: 'Completed', progress: { totalBytes: 4096, bytesDone: 4096 } }), 'pvc-new');
    expect(JSON.stringify(info)).toBe(
      JSON.stringify({
        pvcName: 'data',
        pvcNamespace: 'copy',
        pvName: 'pvc-new',
        restoreMethod: 'CSISnapshot',
        snapshotDataMoved: true,
        snapshotDataMovementInfo: {
          dataMover: 'velero',
          uploaderType: 'kopia',
          snapshotHandle: 'snap-1',
          operationID: dataDownloadOperationId(RESTORE_UID, PVC_UID),
          size: 4096,
          Phase: 'Completed',
        },
      }),
    );
  });

  it('the wait over PVRs and DataDownloads together is done only when both are', () => {
    const pv = { podVolumeRestores: [], completed: 0, failed: 0, done: true, errors: [] };
    const dds = { dataDownloads: [dd(), dd()], completed: 1, failed: 0, done: false, errors: [] };
    expect(combineOperations(pv, dds)).toMatchObject({ attempted: 2, completed: 1, failed: 0, done: false });
    expect(combineOperations(pv, { ...dds, done: true, failed: 1, errors: ['x'] })).toMatchObject({ attempted: 2, completed: 1, failed: 1, done: true, errors: ['x'] });
  });
});
