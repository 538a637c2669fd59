import { describe, expect, it } from 'vitest';
import { newDataDownload, newDataUpload, type DataDownload, type DataUpload } from '../../../src/api/index.js';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { dataDownloadAcceptDecision, dataDownloadSpec, selectedNodeDecision, targetPvcDecision, type DataDownloadControllerContext } from '../../../src/agent/controllers/data-download.js';
import { EMPTY_VOLUME_UPLOAD_MESSAGE, dataUploadSpec, isBuiltInDataMover, type DataUploadControllerContext } from '../../../src/agent/controllers/data-upload.js';
import { RESTORED_PV_ANNOTATION } from '../../../src/agent/exposer/rebind.js';
import type { Kube } from '../../../src/kube/client.js';

// The kind specs only keep these; nothing here talks to a cluster.
const ctx = { kube: {} as Kube, namespace: 'velero', nodeName: 'node-1', prepareTimeoutMs: 60_000 } as unknown as DataUploadControllerContext & DataDownloadControllerContext;

const du = (datamover?: string): DataUpload =>
  newDataUpload({
    namespace: 'velero',
    name: 'b1-abcde',
    spec: { snapshotType: 'CSI', csiSnapshot: { volumeSnapshot: 'vs', storageClass: 'sc' }, sourcePVC: 'data', sourceNamespace: 'app', backupStorageLocation: 'default', operationTimeout: '4h0m0s', ...(datamover !== undefined ? { datamover } : {}) },
  });
const dd = (annotations?: Record<string, string>): DataDownload =>
  newDataDownload({
    namespace: 'velero',
    name: 'r1-abcde',
    ...(annotations ? { annotations } : {}),
    spec: { targetVolume: { pvc: 'data', pv: '', namespace: 'restored' }, backupStorageLocation: 'default', snapshotID: 'abc', sourceNamespace: 'app', operationTimeout: '4h0m0s' },
  });

describe('DataUpload and DataDownload kind specs', () => {
  it('run only the built-in data mover ("" or velero); another one\'s CRs are left alone', () => {
    expect(['', undefined, 'velero'].map(isBuiltInDataMover)).toEqual([true, true, true]);
    expect(isBuiltInDataMover('acme')).toBe(false);
    expect(dataUploadSpec(ctx).ignored(du('acme'))).toBe(true);
    expect(dataUploadSpec(ctx).ignored(du())).toBe(false);
    expect(dataDownloadSpec(ctx).ignored(dd())).toBe(false);
  });

  it('use the data-upload-download finalizer and record the claiming node as node and acceptedByNode', () => {
    const spec = dataUploadSpec(ctx);
    expect(spec.finalizer).toBe('velero.io/data-upload-download-finalizer');
    expect(dataDownloadSpec(ctx).finalizer).toBe('velero.io/data-upload-download-finalizer');
    const o = du();
    spec.onAccepted?.(o, 'node-1');
    expect(o.status).toEqual({ node: 'node-1', acceptedByNode: 'node-1' });
    expect(spec.processingNode(o)).toBe('node-1');
  });

  it('a completed DataUpload records the snapshot ID and the path; an empty volume says so', () => {
    const spec = dataUploadSpec(ctx);
    const o = du();
    spec.onCompleted(o, { snapshotID: 'snap-1', emptySnapshot: false, source: { byPath: '/uid', volumeMode: 'Filesystem' }, totalBytes: 10 });
    expect(o.status).toEqual({ path: '/uid', snapshotID: 'snap-1' });
    const empty = du();
    spec.onCompleted(empty, { snapshotID: '', emptySnapshot: true, source: { byPath: '/uid', volumeMode: 'Filesystem' }, totalBytes: 0 });
    expect(empty.status?.message).toBe(EMPTY_VOLUME_UPLOAD_MESSAGE);
  });

  it('a DataUpload is claimed only by a node its storage class\'s load affinity allows', async () => {
    const affinity = [{ nodeSelector: { matchLabels: { zone: 'z1' } } }, { nodeSelector: { matchLabels: { zone: 'z2' } }, storageClass: 'sc' }];
    const on = (zone: string) => dataUploadSpec({ ...ctx, loadAffinity: affinity, nodeLabels: { zone } }).acceptDecision(du());
    // The upload's storage class is `sc`: its own entry applies, not the first one.
    expect(await on('z2')).toEqual({ accept: true });
    expect(await on('z1')).toMatchObject({ accept: false, why: "this node does not match the node agent's loadAffinity for storage class sc" });
    expect(await dataUploadSpec(ctx).acceptDecision(du())).toEqual({ accept: true });
    // backupPVC makes the backup volume in another class: that class's entry applies (none here: the first entry).
    const moved = (zone: string) => dataUploadSpec({ ...ctx, loadAffinity: affinity, nodeLabels: { zone }, backupPVC: { sc: { storageClass: 'other' } } }).acceptDecision(du());
    expect(await moved('z1')).toEqual({ accept: true });
    expect(await moved('z2')).toMatchObject({ accept: false });
  });

  it('a DataUpload of another snapshot type fails its expose', async () => {
    const o = du();
    o.spec.snapshotType = 'Other';
    await expect(dataUploadSpec(ctx).expose(o)).rejects.toThrow('unsupported snapshot type "Other"');
  });

  it('a DataDownload is claimed once its target PVC exists, or after the prepare timeout (its expose then fails it)', () => {
    const createdAt = new Date('2026-01-01T00:00:00Z');
    const base = { createdAt, prepareTimeoutMs: 60_000, targetRef: 'restored/data' };
    expect(targetPvcDecision({ ...base, targetExists: true, now: createdAt })).toEqual({ accept: true });
    expect(targetPvcDecision({ ...base, targetExists: false, now: new Date(createdAt.getTime() + 59_000) })).toEqual({ accept: false, retryAfterMs: 3000, why: 'target PVC restored/data does not exist yet' });
    expect(targetPvcDecision({ ...base, targetExists: false, now: new Date(createdAt.getTime() + 60_000) })).toEqual({ accept: true });
  });

  it('a DataDownload into a WaitForFirstConsumer claim is claimed only on the node its workload was scheduled to', () => {
    const createdAt = new Date('2026-01-01T00:00:00Z');
    const at = (s: number) => new Date(createdAt.getTime() + s * 1000);
    const base = { node: 'node-1', createdAt, prepareTimeoutMs: 60_000, targetRef: 'restored/data' };
    expect(selectedNodeDecision({ ...base, selectedNode: 'node-1', now: at(0) })).toEqual({ accept: true });
    // Past the prepare timeout too: the agent of that node may have been busy.
    expect(selectedNodeDecision({ ...base, selectedNode: 'node-1', now: at(3600) })).toEqual({ accept: true });
    const elsewhere = 'target PVC restored/data is restored on node node-2, where its workload was scheduled';
    expect(selectedNodeDecision({ ...base, selectedNode: 'node-2', now: at(59) })).toEqual({ accept: false, retryAfterMs: 5000, why: elsewhere });
    expect(selectedNodeDecision({ ...base, selectedNode: 'node-2', now: at(60) })).toEqual({
      accept: false,
      why: elsewhere,
      fail: 'no node agent on node node-2, where the workload of target PVC restored/data was scheduled, took it within the prepare timeout (60s)',
    });
    const unscheduled = 'target PVC restored/data binds on its first consumer and no pod using it is scheduled yet';
    expect(selectedNodeDecision({ ...base, selectedNode: undefined, now: at(59) })).toEqual({ accept: false, retryAfterMs: 3000, why: unscheduled });
    expect(selectedNodeDecision({ ...base, selectedNode: undefined, now: at(60) })).toEqual({
      accept: false,
      why: unscheduled,
      fail:
        'no pod using target PVC restored/data (WaitForFirstConsumer) was scheduled within the prepare timeout (60s); ' +
        "restorePVC.ignoreDelayBinding: true in the node agent's ConfigMap restores such a volume on any node",
    });
  });

  it("a DataDownload's claim follows the workload's node for a WaitForFirstConsumer class, else the class's load affinity", () => {
    const createdAt = new Date('2026-01-01T00:00:00Z');
    const target = (selectedNode?: string): V1PersistentVolumeClaim => ({
      metadata: { name: 'data', namespace: 'restored', ...(selectedNode !== undefined ? { annotations: { 'volume.kubernetes.io/selected-node': selectedNode } } : {}) },
      spec: { storageClassName: 'local' },
    });
    const onlyNode2 = [{ nodeSelector: { matchLabels: { 'kubernetes.io/hostname': 'node-2' } } }];
    const base = { node: 'node-1', nodeLabels: { 'kubernetes.io/hostname': 'node-1' }, createdAt, now: createdAt, prepareTimeoutMs: 60_000, targetRef: 'restored/data' };
    const decide = (t: V1PersistentVolumeClaim, bindingMode: string | undefined, loadAffinity?: typeof onlyNode2) =>
      dataDownloadAcceptDecision({ ...base, target: t, bindingMode, loadAffinity }).accept;
    // WaitForFirstConsumer: the selected node decides, and the load affinity does not apply (as in Velero).
    expect(decide(target('node-1'), 'WaitForFirstConsumer', onlyNode2)).toBe(true);
    expect(decide(target('node-2'), 'WaitForFirstConsumer')).toBe(false);
    expect(decide(target(), 'WaitForFirstConsumer')).toBe(false);
    expect(decide(target(''), 'WaitForFirstConsumer')).toBe(false);
    // Immediate, no class found, or delay binding ignored (no mode read): the load affinity decides.
    for (const mode of ['Immediate', undefined]) {
      expect(decide(target('node-2'), mode)).toBe(true);
      expect(decide(target('node-1'), mode, onlyNode2)).toBe(false);
    }
  });

  it('a DataDownload whose data mover succeeded is in its re-bind (recorded on the DD), so a restart resumes it', () => {
    const before = dataDownloadSpec(ctx).beforeCompleted;
    expect(before?.pending(dd())).toBe(false);
    expect(before?.pending(dd({ [RESTORED_PV_ANNOTATION]: 'pv-1' }))).toBe(true);
    expect(before?.pending(dd({ [RESTORED_PV_ANNOTATION]: '' }))).toBe(true);
  });
});
