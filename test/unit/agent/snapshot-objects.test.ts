import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { sourcePvcFromSnapshot } from '../../../src/agent/exposer/csi-snapshot-exposer.js';
import { newDataUpload } from '../../../src/api/index.js';
import {
  backupContentName,
  backupPvc,
  backupVolumeSnapshot,
  backupVolumeSnapshotContent,
  isOwnedBy,
  parseVolumeSnapshot,
  parseVolumeSnapshotContent,
  restorePvc,
  snapshotReadiness,
  sourceSnapshotOf,
  type ExposeOwner,
  type VolumeSnapshotView,
} from '../../../src/agent/exposer/snapshot-objects.js';

const du: ExposeOwner = { kind: 'DataUpload', name: 'b1-x7k2p', namespace: 'velero', uid: '0a1b2c3d-4e5f-4000-8000-000000000001' };
const dd: ExposeOwner = { kind: 'DataDownload', name: 'r1-abcde', namespace: 'velero', uid: 'dd-uid' };

const vs = (status?: VolumeSnapshotView['status'], extra: Partial<VolumeSnapshotView['metadata']> = {}): VolumeSnapshotView =>
  parseVolumeSnapshot({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name: 'velero-data-abcde', namespace: 'app', ...extra },
    spec: { source: { persistentVolumeClaimName: 'data' }, volumeSnapshotClassName: 'csi-hostpath-snapclass' },
    ...(status ? { status } : {}),
  });

const content = parseVolumeSnapshotContent({
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshotContent',
  metadata: { name: 'snapcontent-1' },
  spec: { deletionPolicy: 'Delete', driver: 'hostpath.csi.k8s.io', source: { volumeHandle: 'vol-1' }, volumeSnapshotRef: { namespace: 'app', name: 'velero-data-abcde' }, sourceVolumeMode: 'Filesystem' },
  status: { snapshotHandle: 'snap-123', readyToUse: true, restoreSize: 67108864 },
});

describe('the source VolumeSnapshot', () => {
  it('is moved once ready to use and bound; a snapshot error or a deletion is final', () => {
    expect(snapshotReadiness(vs())).toEqual({ ready: false, why: 'volume snapshot app/velero-data-abcde is not ready to use yet' });
    expect(snapshotReadiness(vs({ readyToUse: true }))).toEqual({ ready: false, why: 'volume snapshot app/velero-data-abcde is not bound to a content yet' });
    expect(snapshotReadiness(vs({ readyToUse: true, boundVolumeSnapshotContentName: 'snapcontent-1' }))).toEqual({ ready: true, content: 'snapcontent-1' });
    expect(snapshotReadiness(vs({ readyToUse: false, error: { message: 'driver said no' } }))).toEqual({ failed: 'volume snapshot app/velero-data-abcde failed: driver said no' });
    expect(snapshotReadiness(vs({ readyToUse: true }, { deletionTimestamp: '2026-01-01T00:00:00Z' }))).toEqual({ failed: 'volume snapshot app/velero-data-abcde is being deleted' });
  });

  it('gives the handle, driver, class and restore size (the quantity, else the content\'s bytes)', () => {
    expect(sourceSnapshotOf(vs({ readyToUse: true, restoreSize: '64Mi' }), content)).toEqual({ snapshotHandle: 'snap-123', driver: 'hostpath.csi.k8s.io', restoreSize: '64Mi', snapshotClass: 'csi-hostpath-snapclass' });
    expect(sourceSnapshotOf(vs({ readyToUse: true, restoreSize: '0' }), content).restoreSize).toBe('67108864');
    const noHandle = parseVolumeSnapshotContent({ ...content, status: { readyToUse: true } });
    expect(() => sourceSnapshotOf(vs({ readyToUse: true }), noHandle)).toThrow('volume snapshot content snapcontent-1 has no snapshot handle');
  });

  it('is validated when read', () => {
    expect(() => parseVolumeSnapshot({ metadata: {}, spec: { source: 'data' } })).toThrow(/VolumeSnapshot/);
    expect(() => parseVolumeSnapshotContent({ metadata: {}, spec: { driver: 'd' } })).toThrow(/VolumeSnapshotContent/);
  });
});

describe('objects exposed for a DataUpload', () => {
  const source = { snapshotHandle: 'snap-123', driver: 'hostpath.csi.k8s.io', restoreSize: '64Mi', snapshotClass: 'csi-hostpath-snapclass' };

  it('a cluster-scoped VolumeSnapshotContent named after the DU and its UID, Retain, pre-provisioned from the handle', () => {
    expect(backupContentName(du)).toBe('b1-x7k2p-0a1b2c3d');
    expect(backupContentName({ name: 'x'.repeat(260), uid: du.uid })).toHaveLength(253);
    expect(backupVolumeSnapshotContent({ owner: du, source, volumeMode: 'Block' })).toEqual({
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotContent',
      metadata: { name: 'b1-x7k2p-0a1b2c3d', labels: { 'velero.io/data-upload': 'b1-x7k2p' } },
      spec: {
        deletionPolicy: 'Retain',
        driver: 'hostpath.csi.k8s.io',
        source: { snapshotHandle: 'snap-123' },
        volumeSnapshotRef: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', namespace: 'velero', name: 'b1-x7k2p' },
        volumeSnapshotClassName: 'csi-hostpath-snapclass',
        sourceVolumeMode: 'Block',
      },
    });
  });

  it('a VolumeSnapshot in the install namespace, owned by the DU, bound to that content', () => {
    expect(backupVolumeSnapshot({ owner: du, source })).toEqual({
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: {
        name: 'b1-x7k2p',
        namespace: 'velero',
        labels: { 'velero.io/data-upload': 'b1-x7k2p' },
        ownerReferences: [{ apiVersion: 'velero.io/v2alpha1', kind: 'DataUpload', name: 'b1-x7k2p', uid: du.uid, controller: true }],
      },
      spec: { source: { volumeSnapshotContentName: 'b1-x7k2p-0a1b2c3d' }, volumeSnapshotClassName: 'csi-hostpath-snapclass' },
    });
  });

  const sourcePvc: V1PersistentVolumeClaim = {
    metadata: { name: 'data', namespace: 'app' },
    spec: { storageClassName: 'csi-hostpath-sc', accessModes: ['ReadWriteMany'], volumeMode: 'Block', resources: { requests: { storage: '1Gi' } } },
  };

  it('a backup PVC from that snapshot: the source\'s class and volume mode, ReadWriteOnce, the restore size', () => {
    expect(backupPvc({ owner: du, sourcePvc, storageClass: 'csi-hostpath-sc', restoreSize: '64Mi' })).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'b1-x7k2p',
        namespace: 'velero',
        labels: { 'velero.io/data-upload': 'b1-x7k2p' },
        ownerReferences: [{ apiVersion: 'velero.io/v2alpha1', kind: 'DataUpload', name: 'b1-x7k2p', uid: du.uid, controller: true }],
      },
      spec: {
        storageClassName: 'csi-hostpath-sc',
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '64Mi' } },
        volumeMode: 'Block',
        dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'b1-x7k2p' },
      },
    });
    expect(backupPvc({ owner: du, sourcePvc, storageClass: 'sc', restoreSize: undefined }).spec?.resources?.requests).toEqual({ storage: '1Gi' });
    expect(() => backupPvc({ owner: du, sourcePvc: { metadata: { name: 'data', namespace: 'app' }, spec: {} }, storageClass: 'sc' })).toThrow(/cannot size the backup volume/);
  });

  it('a source PVC deleted since its snapshot is stood in for by what the snapshot says, if it says size and mode', () => {
    const upload = newDataUpload({
      namespace: 'velero',
      name: 'b1-x7k2p',
      spec: { snapshotType: 'CSI', csiSnapshot: { volumeSnapshot: 'vs', storageClass: 'csi-hostpath-sc' }, sourcePVC: 'data', sourceNamespace: 'app', backupStorageLocation: 'default', operationTimeout: '4h0m0s' },
    });
    const standIn = sourcePvcFromSnapshot(upload, { restoreSize: '64Mi', sourceVolumeMode: 'Block' });
    expect(standIn).toEqual({ metadata: { name: 'data', namespace: 'app' }, spec: { volumeMode: 'Block', storageClassName: 'csi-hostpath-sc' } });
    expect(backupPvc({ owner: du, sourcePvc: standIn!, storageClass: 'csi-hostpath-sc', restoreSize: '64Mi' }).spec).toMatchObject({ volumeMode: 'Block', resources: { requests: { storage: '64Mi' } } });
    expect(sourcePvcFromSnapshot(upload, { restoreSize: '64Mi' })).toBeUndefined();
    expect(sourcePvcFromSnapshot(upload, { sourceVolumeMode: 'Filesystem' })).toBeUndefined();
  });

  it('a restore PVC shaped like the target PVC, without its selector', () => {
    const target: V1PersistentVolumeClaim = {
      metadata: { name: 'data', namespace: 'restored' },
      spec: {
        storageClassName: 'csi-hostpath-sc',
        accessModes: ['ReadWriteOnce'],
        volumeMode: 'Filesystem',
        resources: { requests: { storage: '64Mi' } },
        selector: { matchLabels: { 'velero.io/dynamic-pv-restore': 'restored.data.abcde' } },
      },
    };
    const pvc = restorePvc({ owner: dd, targetPvc: target });
    expect(pvc.metadata).toMatchObject({ name: 'r1-abcde', namespace: 'velero', labels: { 'velero.io/data-download': 'r1-abcde' } });
    expect(pvc.spec).toEqual({ storageClassName: 'csi-hostpath-sc', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } }, volumeMode: 'Filesystem' });
  });

  it('an existing object counts as exposed only when it is the owner\'s', () => {
    expect(isOwnedBy({ ownerReferences: [{ uid: du.uid }] }, du)).toBe(true);
    expect(isOwnedBy({ ownerReferences: [{ uid: 'other' }] }, du)).toBe(false);
    expect(isOwnedBy({ name: 'b1-x7k2p-0a1b2c3d', labels: { 'velero.io/data-upload': 'b1-x7k2p' } }, du)).toBe(true);
    expect(isOwnedBy({ name: 'b1-x7k2p-ffffffff', labels: { 'velero.io/data-upload': 'b1-x7k2p' } }, du)).toBe(false);
    expect(isOwnedBy(undefined, du)).toBe(false);
  });
});
