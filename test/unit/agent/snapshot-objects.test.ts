import { PassThrough } from 'node:stream';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { createCsiSnapshotExposer, sourcePvcFromSnapshot } from '../../../src/agent/exposer/csi-snapshot-exposer.js';
import type { SnapshotApi } from '../../../src/agent/exposer/snapshot-api.js';
import { parseNodeAgentConfig } from '../../../src/agent/config.js';
import { newDataUpload, type DataUpload } from '../../../src/api/index.js';
import { createLogger } from '../../../src/base/logger.js';
import type { Kube } from '../../../src/kube/client.js';
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
  snapshotWaitTimedOut,
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

describe("the wait for the source snapshot (the DataUpload's operationTimeout = the backup's csiSnapshotTimeout)", () => {
  const accepted = '2026-01-01T00:00:00Z';
  const at = (ms: number) => new Date(Date.parse(accepted) + ms);
  const wait = (over: { operationTimeout?: string; acceptedTimestamp?: string; now: Date }) => snapshotWaitTimedOut({ snapshot: 'app/velero-data-abcde', acceptedTimestamp: accepted, ...over });

  it('is over operationTimeout after the DataUpload was accepted, with a Velero-like reason', () => {
    expect(wait({ operationTimeout: '10m0s', now: at(10 * 60_000 - 1) })).toBeUndefined();
    expect(wait({ operationTimeout: '10m0s', now: at(10 * 60_000) })).toBe(
      "error wait volume snapshot ready: volume snapshot app/velero-data-abcde is not ready until timeout 10m0s (the backup's csiSnapshotTimeout)",
    );
  });

  it('without a readable timeout or acceptance time only the prepare timeout bounds it', () => {
    expect(wait({ operationTimeout: '', now: at(86_400_000) })).toBeUndefined();
    expect(wait({ operationTimeout: 'soon', now: at(86_400_000) })).toBeUndefined();
    expect(wait({ operationTimeout: '0s', now: at(86_400_000) })).toBeUndefined();
    expect(wait({ operationTimeout: '10m0s', acceptedTimestamp: '', now: at(86_400_000) })).toBeUndefined();
  });
});

describe('the CSI snapshot exposer waiting for the source snapshot', () => {
  const notFound = () => Promise.reject(Object.assign(new Error('not found'), { code: 404 }));
  const kube = { server: 'fake', core: { readNamespacedPod: notFound, readNamespacedPersistentVolumeClaim: notFound } } as unknown as Kube;
  const created: string[] = [];
  const api: SnapshotApi = {
    getSnapshot: () => Promise.resolve(vs({ readyToUse: false })),
    getContent: () => Promise.resolve(undefined),
    createSnapshot: (b) => (created.push(b.metadata.name), Promise.resolve('created')),
    createContent: (b) => (created.push(b.metadata.name), Promise.resolve('created')),
    deleteSnapshot: () => Promise.resolve(),
    deleteContent: () => Promise.resolve(),
  };
  const upload = (operationTimeout: string): DataUpload => {
    const d = newDataUpload({
      namespace: 'velero',
      name: 'b1-x7k2p',
      spec: { snapshotType: 'CSI', csiSnapshot: { volumeSnapshot: 'velero-data-abcde', storageClass: 'sc', snapshotClass: 'c', driver: 'd' }, sourcePVC: 'data', sourceNamespace: 'app', backupStorageLocation: 'default', operationTimeout },
    });
    d.metadata.uid = 'du-uid';
    d.status = { phase: 'Accepted', acceptedTimestamp: '2026-01-01T00:00:00Z' };
    return d;
  };
  const exposer = (nowIso: string) =>
    createCsiSnapshotExposer(
      {
        kube,
        namespace: 'velero',
        nodeName: 'n1',
        nodeAgentPod: {} as V1Pod,
        config: parseNodeAgentConfig({}),
        resourceTimeoutMs: 600_000,
        logLevel: 'info',
        logger: createLogger({ level: 'fatal', destination: new PassThrough() }),
        now: () => new Date(nowIso),
      },
      api,
    );

  it('waits while the snapshot is not ready within the timeout, then fails the expose with the reason', async () => {
    await expect(exposer('2026-01-01T00:01:59Z').expose(upload('2m0s'))).resolves.toEqual({ ready: false, why: 'volume snapshot app/velero-data-abcde is not ready to use yet' });
    await expect(exposer('2026-01-01T00:02:00Z').expose(upload('2m0s'))).rejects.toThrow(
      "error wait volume snapshot ready: volume snapshot app/velero-data-abcde is not ready until timeout 2m0s (the backup's csiSnapshotTimeout)",
    );
    expect(created).toEqual([]);
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

  /** The metadata of what is made in the install namespace for the DU: its name, its label, the DU as controller. */
  const ownedByDu = {
    name: 'b1-x7k2p',
    namespace: 'velero',
    labels: { 'velero.io/data-upload': 'b1-x7k2p' },
    ownerReferences: [{ apiVersion: 'velero.io/v2alpha1', kind: 'DataUpload', name: 'b1-x7k2p', uid: du.uid, controller: true }],
  };

  it('a VolumeSnapshot in the install namespace, owned by the DU, bound to that content', () => {
    expect(backupVolumeSnapshot({ owner: du, source })).toEqual({
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: ownedByDu,
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
      metadata: ownedByDu,
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

  it('a backup PVC as the node agent\'s backupPVC asks: another class, ReadOnlyMany, annotations', () => {
    const pvc = backupPvc({ owner: du, sourcePvc, storageClass: 'backup-sc', restoreSize: '64Mi', readOnly: true, annotations: { 'example.com/shallow': 'true' } });
    expect(pvc.spec).toMatchObject({ storageClassName: 'backup-sc', accessModes: ['ReadOnlyMany'] });
    expect(pvc.metadata).toEqual({ ...ownedByDu, annotations: { 'example.com/shallow': 'true' } });
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

  it('a restore PVC shaped like the target PVC, without its selector; provisioned on a given node when its pod goes there by name', () => {
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
    expect(pvc.metadata?.annotations).toBeUndefined();
    const pinned = restorePvc({ owner: dd, targetPvc: target, selectedNode: 'node-2' });
    expect(pinned.metadata?.annotations).toEqual({ 'volume.kubernetes.io/selected-node': 'node-2' });
    expect(pinned.spec).toEqual(pvc.spec);
  });

  it('an existing object counts as exposed only when it is the owner\'s', () => {
    expect(isOwnedBy({ ownerReferences: [{ uid: du.uid }] }, du)).toBe(true);
    expect(isOwnedBy({ ownerReferences: [{ uid: 'other' }] }, du)).toBe(false);
    expect(isOwnedBy({ name: 'b1-x7k2p-0a1b2c3d', labels: { 'velero.io/data-upload': 'b1-x7k2p' } }, du)).toBe(true);
    expect(isOwnedBy({ name: 'b1-x7k2p-ffffffff', labels: { 'velero.io/data-upload': 'b1-x7k2p' } }, du)).toBe(false);
    expect(isOwnedBy(undefined, du)).toBe(false);
  });
});
