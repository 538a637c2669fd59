import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newBackup, newRestore, type Backup } from '../../../../src/api/index.js';
import { createLogger } from '../../../../src/base/logger.js';
import type { Kube } from '../../../../src/kube/client.js';
import { FilesystemObjectStore } from '../../../../src/plugins/object-store/index.js';
import {
  restoredSnapshotName,
  restoreClaimFromSnapshot,
  volumeSnapshotClassRestoreAction,
  volumeSnapshotContentRestoreAction,
  volumeSnapshotRestoreAction,
} from '../../../../src/server/item-actions/restore-csi-snapshot.js';
import type { RestoreItemContext, UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import { rewriteArchive } from '../../../../src/server/archive/rewrite.js';
import { BackupArchiveWriter } from '../../../../src/server/archive/writer.js';
import { finalCsiVolumeInfo, storeCsiSnapshots, type CsiFinalization } from '../../../../src/server/csi/backup-finalize.js';
import { deletingObjectsFor } from '../../../../src/server/csi/snapshot-delete.js';
import {
  backedUpVolumeSnapshot,
  backedUpVolumeSnapshotContent,
  binaryQuantity,
  csiSnapshotOperation,
  csiSnapshotOperationId,
  csiSnapshotVolumeInfo,
  quantityBytes,
  snapshottedClaim,
  type CsiSnapshotRef,
  type VolumeSnapshot,
  type VolumeSnapshotContent,
} from '../../../../src/server/csi/snapshot-objects.js';
import { trackCsiSnapshots } from '../../../../src/server/csi/snapshot-tracking.js';
import { BackupStore } from '../../../../src/storage/backup-store.js';
import { readTarGz } from '../backup/tar.js';

const ref: CsiSnapshotRef = {
  namespace: 'shop',
  name: 'velero-data-abcde',
  pvcName: 'data',
  pvcUid: 'pvc-uid',
  pvName: 'pvc-1234',
  driver: 'hostpath.csi.k8s.io',
  snapshotClass: 'csi-hostpath-snapclass',
  created: '2026-03-01T10:00:00.000Z',
};

const vs: VolumeSnapshot = {
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshot',
  metadata: { name: ref.name, namespace: 'shop', labels: { 'velero.io/backup-name': 'b1' }, creationTimestamp: ref.created },
  spec: { source: { persistentVolumeClaimName: 'data' }, volumeSnapshotClassName: 'csi-hostpath-snapclass' },
  status: { readyToUse: true, boundVolumeSnapshotContentName: 'snapcontent-1', restoreSize: '1Gi', creationTime: '2026-03-01T10:00:01Z' },
};

const vsc: VolumeSnapshotContent = {
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshotContent',
  metadata: { name: 'snapcontent-1' },
  spec: {
    driver: 'hostpath.csi.k8s.io',
    deletionPolicy: 'Delete',
    volumeSnapshotClassName: 'csi-hostpath-snapclass',
    source: { volumeHandle: 'vol-1' },
    volumeSnapshotRef: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', namespace: 'shop', name: ref.name, uid: 'vs-uid', resourceVersion: '7' },
  },
  status: { snapshotHandle: 'snap-0001', restoreSize: 1073741824, readyToUse: true },
};

function backup(spec: Backup['spec'] = {}): Backup {
  const b = newBackup({ namespace: 'velero', name: 'b1', spec: { storageLocation: 'default', csiSnapshotTimeout: '10m0s', ...spec } });
  b.metadata.uid = 'backup-uid';
  return b;
}

describe('the records of a kept CSI snapshot', () => {
  it("operation ID is Velero's <namespace>/<volumesnapshot>/<RFC 3339 start>", () => {
    expect(csiSnapshotOperationId(ref)).toBe('shop/velero-data-abcde/2026-03-01T10:00:00Z');
  });

  it('the item operation: velero.io/csi-volumesnapshot-backupper on the VolumeSnapshot, with it and its content as post-operation items', () => {
    const op = csiSnapshotOperation({ backup: backup(), state: { ref, snapshot: vs, content: vsc }, phase: 'Completed', now: new Date('2026-03-01T10:01:00Z') });
    expect(op.spec).toEqual({
      backupName: 'b1',
      backupUID: 'backup-uid',
      backupItemAction: 'velero.io/csi-volumesnapshot-backupper',
      resourceIdentifier: { Group: 'snapshot.storage.k8s.io', Resource: 'volumesnapshots', Namespace: 'shop', Name: ref.name },
      operationID: 'shop/velero-data-abcde/2026-03-01T10:00:00Z',
      postOperationItems: [
        { Group: 'snapshot.storage.k8s.io', Resource: 'volumesnapshots', Namespace: 'shop', Name: ref.name },
        { Group: 'snapshot.storage.k8s.io', Resource: 'volumesnapshotcontents', Namespace: '', Name: 'snapcontent-1' },
      ],
    });
    expect(op.status).toMatchObject({ phase: 'Completed', updated: '2026-03-01T10:01:00Z' });
  });

  it("volume info: method CSISnapshot, the local snapshot preserved, Velero's csiSnapshotInfo fields", () => {
    const entry = csiSnapshotVolumeInfo({ ref, snapshot: vs, content: vsc, result: 'succeeded', completed: '2026-03-01T10:01:00.000Z' });
    expect(entry).toEqual({
      pvcName: 'data',
      pvcNamespace: 'shop',
      pvName: 'pvc-1234',
      backupMethod: 'CSISnapshot',
      snapshotDataMoved: false,
      preserveLocalSnapshot: true,
      skipped: false,
      startTimestamp: '2026-03-01T10:00:01Z',
      completionTimestamp: '2026-03-01T10:01:00.000Z',
      result: 'succeeded',
      csiSnapshotInfo: { snapshotHandle: 'snap-0001', size: 1073741824, driver: 'hostpath.csi.k8s.io', vscName: 'snapcontent-1', operationID: 'shop/velero-data-abcde/2026-03-01T10:00:00Z', ReadyToUse: true },
    });
    expect(Object.keys(entry)).toEqual(['pvcName', 'pvcNamespace', 'pvName', 'backupMethod', 'snapshotDataMoved', 'preserveLocalSnapshot', 'skipped', 'startTimestamp', 'completionTimestamp', 'result', 'csiSnapshotInfo']);
  });

  it("the stored VolumeSnapshot carries Velero's annotations; the content keeps its original deletion policy and the backup's label", () => {
    const stored = backedUpVolumeSnapshot(vs, vsc, 'Delete');
    expect(stored.metadata.annotations).toEqual({
      'velero.io/csi-vsc-deletion-policy': 'Delete',
      'velero.io/csi-volumesnapshot-handle': 'snap-0001',
      'velero.io/csi-driver-name': 'hostpath.csi.k8s.io',
      'velero.io/csi-volumesnapshot-restore-size': '1Gi',
      'backup.velero.io/must-include-additional-items': 'true',
    });
    const content = backedUpVolumeSnapshotContent({ ...vsc, spec: { ...vsc.spec, deletionPolicy: 'Retain' } }, 'b1', 'Delete');
    expect(content.spec?.deletionPolicy).toBe('Delete');
    expect(content.metadata.labels).toEqual({ 'velero.io/backup-name': 'b1' });
  });

  it("the snapshotted claim: Velero's label and annotation naming the snapshot; a request smaller than the snapshot grows to it", () => {
    const pvc: { metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec: { resources: { requests: Record<string, string> } } } = {
      metadata: { name: 'data', labels: { app: 'db' } },
      spec: { resources: { requests: { storage: '512Mi' } } },
    };
    const out = snapshottedClaim(pvc, ref.name, 'b1', 1073741824);
    expect(out.metadata.labels).toEqual({ app: 'db', 'velero.io/volume-snapshot-name': ref.name, 'velero.io/backup-name': 'b1' });
    expect(out.metadata.annotations).toEqual({ 'velero.io/volume-snapshot-name': ref.name, 'backup.velero.io/must-include-additional-items': 'true' });
    expect(out.spec.resources.requests.storage).toBe('1Gi');
    expect(snapshottedClaim({ ...pvc, spec: { resources: { requests: { storage: '2Gi' } } } }, 'x', 'b1', 1073741824).spec.resources.requests.storage).toBe('2Gi');
  });

  it('quantities', () => {
    expect(quantityBytes('1Gi')).toBe(1073741824);
    expect(quantityBytes('500M')).toBe(500_000_000);
    expect(quantityBytes('12345')).toBe(12345);
    expect(quantityBytes('nonsense')).toBeUndefined();
    expect(binaryQuantity(1073741824)).toBe('1Gi');
    expect(binaryQuantity(1536 * 1024 * 1024)).toBe('1536Mi');
    expect(binaryQuantity(1000)).toBe('1000');
  });
});

describe('waiting for kept CSI snapshots', () => {
  const created = Date.parse(ref.created);
  const track = (snapshot: VolumeSnapshot | undefined, content: VolumeSnapshotContent | undefined, nowMs: number) =>
    trackCsiSnapshots({ states: [{ ref, snapshot, content }], timeoutMs: 600_000, timeout: '10m0s', nowMs });

  it('ready with a handle: completed', () => {
    expect(track(vs, vsc, created + 1000)).toMatchObject({ attempted: 1, completed: 1, failed: 0, done: true });
  });

  it('not ready yet: in progress until csiSnapshotTimeout after its creation, even with an error the controller retries', () => {
    const cutting = { ...vs, status: { boundVolumeSnapshotContentName: 'snapcontent-1', readyToUse: false, error: { message: 'Failed to create snapshot: driver says no' } } };
    const t = track(cutting, { ...vsc, status: {} }, created + 60_000);
    expect(t).toMatchObject({ completed: 0, failed: 0, done: false, nextDeadlineMs: created + 600_000 });
    expect(t.verdicts[0]?.phase).toBe('InProgress');
  });

  it('past the timeout: failed, with the snapshot error in the message', () => {
    const cutting = { ...vs, status: { readyToUse: false, error: { message: 'Failed to create snapshot: driver says no' } } };
    const t = track(cutting, undefined, created + 600_000);
    expect(t).toMatchObject({ failed: 1, done: true });
    expect(t.verdicts[0]).toMatchObject({
      phase: 'Failed',
      error: 'CSI snapshot shop/velero-data-abcde of PVC shop/data was not ready within the CSI snapshot timeout 10m0s: Failed to create snapshot: driver says no',
    });
  });

  it('a VolumeSnapshot that disappeared is failed at once', () => {
    expect(track(undefined, undefined, created + 1000)).toMatchObject({ failed: 1, done: true });
  });
});

describe('rewriting the tarball at finalization', () => {
  async function archive(): Promise<string> {
    const w = await BackupArchiveWriter.create({ tmpDir: mkdtempSync(join(tmpdir(), 'cairn-rw-')) });
    await w.addItem({ groupResource: 'persistentvolumeclaims', namespace: 'shop', name: 'data', version: 'v1', object: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'shop' } } });
    await w.addItem({ groupResource: 'configmaps', namespace: 'shop', name: 'c', version: 'v1', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'shop' } } });
    return (await w.finish()).path;
  }

  it('replaces changed items in both copies, adds new ones, and is the same when run twice', async () => {
    const { createReadStream } = await import('node:fs');
    const opts = {
      replace: (item: { groupResource: string }, o: unknown) => (item.groupResource === 'persistentvolumeclaims' ? { ...(o as object), changed: true } : undefined),
      add: [{ groupResource: 'volumesnapshots.snapshot.storage.k8s.io', namespace: 'shop', name: 'vs1', version: 'v1', object: { kind: 'VolumeSnapshot' } }],
    };
    const once = await rewriteArchive(createReadStream(await archive()), opts);
    const twice = await rewriteArchive(once.open(), opts);
    const entries = await readTarGz(twice.path);
    expect(entries.map((e) => e.name)).toEqual([
      'metadata/version',
      'resources/persistentvolumeclaims/namespaces/shop/data.json',
      'resources/persistentvolumeclaims/v1-preferredversion/namespaces/shop/data.json',
      'resources/configmaps/namespaces/shop/c.json',
      'resources/configmaps/v1-preferredversion/namespaces/shop/c.json',
      'resources/volumesnapshots.snapshot.storage.k8s.io/namespaces/shop/vs1.json',
      'resources/volumesnapshots.snapshot.storage.k8s.io/v1-preferredversion/namespaces/shop/vs1.json',
    ]);
    expect(JSON.parse(entries[2]!.body)).toMatchObject({ kind: 'PersistentVolumeClaim', changed: true });
    await once.dispose();
    await twice.dispose();
  });
});

describe('storing kept snapshots in the backup', () => {
  it("puts Velero's three CSI files, the objects in the tarball, the claim annotated, and the resource list", async () => {
    const fs = new FilesystemObjectStore({ root: mkdtempSync(join(tmpdir(), 'cairn-csi-store-')), durability: 'none' });
    const store = new BackupStore(fs);
    const w = await BackupArchiveWriter.create({ tmpDir: mkdtempSync(join(tmpdir(), 'cairn-csi-tar-')) });
    await w.addItem({ groupResource: 'persistentvolumeclaims', namespace: 'shop', name: 'data', version: 'v1', object: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'shop' }, spec: { resources: { requests: { storage: '1Gi' } } } } });
    const finished = await w.finish();
    const { readFileSync } = await import('node:fs');
    await store.putBackup({ name: 'b1', metadata: backup(), contents: readFileSync(finished.path), log: '', files: { resourceList: { 'v1/PersistentVolumeClaim': ['shop/data'] } } });
    const cls = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotClass', metadata: { name: 'csi-hostpath-snapclass' }, driver: 'hostpath.csi.k8s.io', deletionPolicy: 'Delete' };
    const plan: CsiFinalization = {
      kept: [{ ref, snapshot: backedUpVolumeSnapshot(vs, vsc, 'Delete'), content: backedUpVolumeSnapshotContent(vsc, 'b1', 'Delete'), inCluster: true }],
      failed: [],
      classes: [cls],
      operations: [],
      errors: [],
      attempted: 1,
      completed: 1,
    };
    await storeCsiSnapshots({ store, backup: backup(), plan, log: createLogger({ level: 'fatal' }) });
    expect((await store.getBackupJson('b1', 'csiVolumeSnapshots')) as VolumeSnapshot[]).toHaveLength(1);
    expect((await store.getBackupJson('b1', 'csiVolumeSnapshotContents')) as VolumeSnapshotContent[]).toMatchObject([{ metadata: { name: 'snapcontent-1', labels: { 'velero.io/backup-name': 'b1' } } }]);
    expect(await store.getBackupJson('b1', 'csiVolumeSnapshotClasses')).toEqual([cls]);
    expect(await store.getBackupJson('b1', 'resourceList')).toEqual({
      'snapshot.storage.k8s.io/v1/VolumeSnapshot': ['shop/velero-data-abcde'],
      'snapshot.storage.k8s.io/v1/VolumeSnapshotClass': ['csi-hostpath-snapclass'],
      'snapshot.storage.k8s.io/v1/VolumeSnapshotContent': ['snapcontent-1'],
      'v1/PersistentVolumeClaim': ['shop/data'],
    });
    const chunks: Buffer[] = [];
    for await (const c of await store.getBackupContents('b1')) chunks.push(c as Buffer);
    const entries = await readTarGz(Buffer.concat(chunks));
    const pvc = JSON.parse(entries.find((e) => e.name === 'resources/persistentvolumeclaims/namespaces/shop/data.json')!.body) as UnstructuredObject;
    expect(pvc.metadata.annotations).toEqual({ 'velero.io/volume-snapshot-name': ref.name, 'backup.velero.io/must-include-additional-items': 'true' });
    expect(entries.map((e) => e.name).filter((n) => n.includes('snapshot.storage.k8s.io'))).toEqual([
      'resources/volumesnapshots.snapshot.storage.k8s.io/namespaces/shop/velero-data-abcde.json',
      'resources/volumesnapshots.snapshot.storage.k8s.io/v1-preferredversion/namespaces/shop/velero-data-abcde.json',
      'resources/volumesnapshotcontents.snapshot.storage.k8s.io/cluster/snapcontent-1.json',
      'resources/volumesnapshotcontents.snapshot.storage.k8s.io/v1-preferredversion/cluster/snapcontent-1.json',
      'resources/volumesnapshotclasses.snapshot.storage.k8s.io/cluster/csi-hostpath-snapclass.json',
      'resources/volumesnapshotclasses.snapshot.storage.k8s.io/v1-preferredversion/cluster/csi-hostpath-snapclass.json',
    ]);
  });

  it('the final volume info: succeeded for kept snapshots, failed for the others, other entries untouched', () => {
    const stored = [
      csiSnapshotVolumeInfo({ ref }),
      csiSnapshotVolumeInfo({ ref: { ...ref, name: 'velero-logs-x', pvcName: 'logs', pvName: 'pv-logs' } }),
      { pvName: 'pv-other', snapshotDataMoved: false, preserveLocalSnapshot: false, skipped: true, skippedReason: 'any: x;' },
    ];
    const plan: CsiFinalization = {
      kept: [{ ref, snapshot: vs, content: vsc, inCluster: true }],
      failed: [{ ref: { ...ref, name: 'velero-logs-x', pvcName: 'logs', pvName: 'pv-logs' }, error: 'boom' }],
      classes: [],
      operations: [],
      errors: [],
      attempted: 2,
      completed: 1,
    };
    const out = finalCsiVolumeInfo(stored, plan, new Date('2026-03-01T10:05:00Z'));
    expect(out.map((e) => [e.pvcName, e.result, e.csiSnapshotInfo?.snapshotHandle])).toEqual([
      ['data', 'succeeded', 'snap-0001'],
      ['logs', 'failed', ''],
      [undefined, undefined, undefined],
    ]);
  });
});

describe('deleting a kept snapshot with its backup', () => {
  it("a content bound to the storage's handle with deletion policy Delete and its VolumeSnapshot, named from the backup and the handle", () => {
    const { content, snapshot } = deletingObjectsFor(backup(), backedUpVolumeSnapshotContent(vsc, 'b1', 'Delete'), 'velero');
    expect(content.metadata.name).toMatch(/^vsc-delete-[0-9a-f]{40}$/);
    expect(deletingObjectsFor(backup(), vsc, 'velero').content.metadata.name).toBe(content.metadata.name);
    expect(content.spec).toMatchObject({
      driver: 'hostpath.csi.k8s.io',
      deletionPolicy: 'Delete',
      source: { snapshotHandle: 'snap-0001' },
      volumeSnapshotClassName: 'csi-hostpath-snapclass',
      volumeSnapshotRef: { namespace: 'velero', name: content.metadata.name },
    });
    expect(snapshot).toMatchObject({ metadata: { name: content.metadata.name, namespace: 'velero' }, spec: { source: { volumeSnapshotContentName: content.metadata.name } } });
  });
});

describe('restoring from a kept CSI snapshot', () => {
  const restore = newRestore({ namespace: 'velero', name: 'r1', spec: { backupName: 'b1', namespaceMapping: { shop: 'shop2' } } });
  restore.metadata.uid = 'restore-uid';
  const noVolumes = newRestore({ namespace: 'velero', name: 'r2', spec: { backupName: 'b1', restorePVs: false } });
  const name = restoredSnapshotName('restore-uid', ref.name);
  const ctx = (itemFromBackup: UnstructuredObject, r = restore) => ({ restore: r, backup: backup(), kube: {} as Kube, log: createLogger({ level: 'fatal' }), itemFromBackup }) as RestoreItemContext;
  const storedVs = backedUpVolumeSnapshot(vs, vsc, 'Delete') as unknown as UnstructuredObject;
  const storedVsc = backedUpVolumeSnapshotContent(vsc, 'b1', 'Delete') as unknown as UnstructuredObject;

  it("names the restored snapshot sha256('<restore UID>/<volumesnapshot>') as Velero does", () => {
    // echo -n 'restore-uid/velero-data-abcde' | sha256sum
    expect(name).toBe('6e31b6c259a32e271f515826ac3b978e48582b00b5f6b91d184c42f1b424cde6');
  });

  it('the claim gets the restored VolumeSnapshot as its data source and loses its old volume', () => {
    const pvc: UnstructuredObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'shop2' }, spec: { volumeName: 'pvc-1234', dataSourceRef: { kind: 'X' } } };
    const fromBackup: UnstructuredObject = { ...pvc, metadata: { name: 'data', namespace: 'shop', annotations: { 'velero.io/volume-snapshot-name': ref.name } } };
    const out = restoreClaimFromSnapshot(pvc, fromBackup, restore);
    expect(out?.item.spec).toEqual({ dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name } });
    expect(out?.additionalItems).toEqual([{ groupResource: 'volumesnapshots.snapshot.storage.k8s.io', namespace: 'shop', name: ref.name }]);
    expect(restoreClaimFromSnapshot(pvc, { ...pvc, metadata: { name: 'data' } }, restore)).toBeUndefined();
    expect(restoreClaimFromSnapshot(pvc, fromBackup, noVolumes)?.item.spec).toEqual({});
  });

  it('the VolumeSnapshot is renamed and sourced from the content of the same name, with deletion policy Retain noted', async () => {
    const item: UnstructuredObject = { ...structuredClone(storedVs), metadata: { ...structuredClone(storedVs.metadata), namespace: 'shop2' } };
    delete item.status;
    const out = await volumeSnapshotRestoreAction.execute(item, ctx(storedVs));
    expect(out.item.metadata.name).toBe(name);
    expect(out.item.spec).toEqual({ source: { volumeSnapshotContentName: name }, volumeSnapshotClassName: 'csi-hostpath-snapclass' });
    expect(out.item.metadata.annotations?.['velero.io/csi-vsc-deletion-policy']).toBe('Retain');
    expect(out.additionalItems).toEqual([{ groupResource: 'volumesnapshotcontents.snapshot.storage.k8s.io', name: 'snapcontent-1' }]);
  });

  it('the content is bound statically to the snapshot handle, Retain, to the renamed snapshot in the mapped namespace', async () => {
    const item = structuredClone(storedVsc);
    delete item.status;
    const out = await volumeSnapshotContentRestoreAction.execute(item, ctx(storedVsc));
    expect(out.item.metadata.name).toBe(name);
    expect(out.item.spec).toEqual({
      driver: 'hostpath.csi.k8s.io',
      deletionPolicy: 'Retain',
      volumeSnapshotClassName: 'csi-hostpath-snapclass',
      source: { snapshotHandle: 'snap-0001' },
      volumeSnapshotRef: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', namespace: 'shop2', name },
    });
    await expect(volumeSnapshotContentRestoreAction.execute(item, ctx({ ...storedVsc, status: {} }))).rejects.toThrow(/no snapshot handle/);
  });

  it('with restorePVs false no snapshot object is restored', async () => {
    for (const action of [volumeSnapshotRestoreAction, volumeSnapshotContentRestoreAction, volumeSnapshotClassRestoreAction]) {
      expect((await action.execute(storedVs, ctx(storedVs, noVolumes))).skip?.reason).toMatch(/restorePVs is false/);
    }
  });
});
