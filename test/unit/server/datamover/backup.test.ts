import { describe, expect, it } from 'vitest';
import { newBackup, type Backup, type DataUpload } from '../../../../src/api/index.js';
import {
  backupSnapshotClassAnnotation,
  chooseSnapshotClass,
  csiSnapshotTimeoutOf,
  dataUploadOperationId,
  decideVolumeSnapshot,
  pickSnapshotClass,
  type ClaimForDataMovement,
  type SnapshotClassLike,
} from '../../../../src/server/datamover/backup-decision.js';
import { dataUploadFor, operationIdOfDataUpload, volumeSnapshotFor, volumeSnapshotGenerateName } from '../../../../src/server/datamover/backup-objects.js';
import {
  dataMovementVolumeInfo,
  dataUploadErrors,
  dataUploadOperationFor,
  itemOperationTimeoutMs,
  mergeDataMovementVolumeInfo,
  trackDataUploads,
} from '../../../../src/server/datamover/backup-tracking.js';
import { movedSnapshotsOf } from '../../../../src/server/datamover/backup-cleanup.js';
import { NO_DATA_MOVED_REASON, type BackupVolumeInfo } from '../../../../src/api/volume-info.js';
import { BackupVolumeInfoCollector } from '../../../../src/server/backup/volume-info-collector.js';

const BACKUP_UID = '11111111-2222-3333-4444-555555555555';
const PVC_UID = '66666666-7777-8888-9999-000000000000';

function backupWith(spec: Backup['spec'] = {}): Backup {
  const b = newBackup({ namespace: 'cairn', name: 'nightly', spec: { storageLocation: 'default', snapshotMoveData: true, itemOperationTimeout: '4h0m0s', ...spec } });
  b.metadata.uid = BACKUP_UID;
  return b;
}

const claim: ClaimForDataMovement = { namespace: 'shop', name: 'data', uid: PVC_UID, phase: 'Bound', volumeName: 'pvc-1', storageClassName: 'csi-hostpath-sc' };
const DRIVER = 'hostpath.csi.k8s.io';
const cls = (name: string, driver = DRIVER, extra: Partial<SnapshotClassLike['metadata']> = {}): SnapshotClassLike => ({ metadata: { name, ...extra }, driver });

describe('which VolumeSnapshotClass', () => {
  it('the one labelled velero.io/csi-volumesnapshot-class=true first', () => {
    const classes = [cls('a', DRIVER, { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } }), cls('b', DRIVER, { labels: { 'velero.io/csi-volumesnapshot-class': 'true' } })];
    expect(pickSnapshotClass(classes, DRIVER)?.metadata.name).toBe('b');
  });

  it('else the default class of the driver', () => {
    const classes = [cls('a'), cls('b', DRIVER, { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } }), cls('c', 'other.csi', { labels: { 'velero.io/csi-volumesnapshot-class': 'true' } })];
    expect(pickSnapshotClass(classes, DRIVER)?.metadata.name).toBe('b');
  });

  it('else the only class of the driver; several without a mark: none', () => {
    expect(pickSnapshotClass([cls('only'), cls('x', 'other.csi')], DRIVER)?.metadata.name).toBe('only');
    expect(pickSnapshotClass([cls('a'), cls('b')], DRIVER)).toBeUndefined();
    expect(pickSnapshotClass([cls('x', 'other.csi')], DRIVER)).toBeUndefined();
  });
});

describe('which PVCs are moved', () => {
  const decide = (over: { backup?: Backup; claim?: Partial<ClaimForDataMovement>; taken?: string[]; driver?: string; classes?: SnapshotClassLike[] } = {}) =>
    decideVolumeSnapshot({
      backup: over.backup ?? backupWith(),
      claim: { ...claim, ...over.claim },
      takenByFsBackup: new Set(over.taken ?? []),
      driver: over.driver ?? DRIVER,
      classes: over.classes ?? [cls('csi-hostpath-snapclass')],
    });

  it('a bound claim of a driver with a snapshot class, not taken by fs-backup: moved with snapshotMoveData, else kept', () => {
    expect(decide()).toEqual({ snapshot: { method: 'data-movement', driver: DRIVER, snapshotClass: 'csi-hostpath-snapclass', classSource: 'default' } });
    expect(decide({ backup: backupWith({ snapshotMoveData: false }) })).toEqual({ snapshot: { method: 'csi-snapshot', driver: DRIVER, snapshotClass: 'csi-hostpath-snapclass', classSource: 'default' } });
  });

  it('every "no" has its csiSnapshot reason', () => {
    expect(decide({ backup: backupWith({ snapshotVolumes: false }) }).skippedReason).toBe('csiSnapshot: the backup has snapshotVolumes set to false;');
    expect(decide({ claim: { phase: 'Pending', volumeName: '' } }).skippedReason).toBe('csiSnapshot: PVC shop/data is not bound;');
    expect(decide({ taken: [PVC_UID] }).skippedReason).toBe('csiSnapshot: the volume is backed up by pod volume backup;');
    expect(decide({ driver: '' }).skippedReason).toBe('csiSnapshot: the volume is not a CSI volume;');
  });

  it('a CSI volume whose driver has no snapshot class: skipped, with a warning (Velero fails the item)', () => {
    expect(decide({ driver: 'other.csi.example', classes: [cls('csi-hostpath-snapclass')] })).toEqual({
      skippedReason: 'csiSnapshot: no VolumeSnapshotClass for the CSI driver other.csi.example;',
      warning: 'PVC shop/data is not moved: no VolumeSnapshotClass for the CSI driver other.csi.example',
    });
    expect(decide({ backup: backupWith({ snapshotMoveData: false }), driver: 'other.csi.example' }).warning).toBe('PVC shop/data is not snapshotted: no VolumeSnapshotClass for the CSI driver other.csi.example');
  });

  it('snapshotVolumes unset counts as yes', () => {
    expect(decide({ backup: backupWith({ snapshotVolumes: undefined }) }).snapshot).toBeDefined();
  });

  it('a matching volume policy decides first: snapshot even with snapshotVolumes false; skip and fs-backup never snapshot', () => {
    const policy = (action: 'skip' | 'fs-backup' | 'snapshot') => ({ action, policy: 'volume policy #1 of ConfigMap cairn/p' });
    const off = backupWith({ snapshotVolumes: false, snapshotMoveData: false });
    expect(decideVolumeSnapshot({ backup: off, claim, takenByFsBackup: new Set(), driver: DRIVER, classes: [cls('c')], policy: policy('snapshot') }).snapshot?.method).toBe('csi-snapshot');
    expect(decideVolumeSnapshot({ backup: backupWith(), claim, takenByFsBackup: new Set(), driver: DRIVER, classes: [cls('c')], policy: policy('skip') })).toEqual({
      skippedReason: 'csiSnapshot: volume policy #1 of ConfigMap cairn/p has the action skip;',
    });
    expect(decideVolumeSnapshot({ backup: backupWith(), claim, takenByFsBackup: new Set(), driver: DRIVER, classes: [cls('c')], policy: policy('fs-backup') }).skippedReason).toBe(
      'csiSnapshot: volume policy #1 of ConfigMap cairn/p has the action fs-backup;',
    );
  });
});

describe('snapshot class overrides (Velero annotations)', () => {
  const GOLD = 'gold';
  const classes = [cls('csi-hostpath-snapclass', DRIVER, { labels: { 'velero.io/csi-volumesnapshot-class': 'true' } }), cls(GOLD), cls('silver'), cls('ebs-snap', 'ebs.csi.aws.com')];
  const annotated = (annotations: Record<string, string>) => {
    const b = backupWith();
    b.metadata.annotations = annotations;
    return b;
  };
  const decide = (opts: { backup?: Backup; pvcAnnotations?: Record<string, string> }) =>
    decideVolumeSnapshot({ backup: opts.backup ?? backupWith(), claim: { ...claim, annotations: opts.pvcAnnotations }, takenByFsBackup: new Set(), driver: DRIVER, classes });

  it('the Backup annotation velero.io/csi-volumesnapshot-class_<driver> beats the labelled class', () => {
    expect(backupSnapshotClassAnnotation('Hostpath.CSI.k8s.io')).toBe('velero.io/csi-volumesnapshot-class_hostpath.csi.k8s.io');
    const backup = annotated({ [backupSnapshotClassAnnotation(DRIVER)]: GOLD, 'velero.io/csi-volumesnapshot-class_ebs.csi.aws.com': 'ebs-snap' });
    expect(decide({ backup })).toEqual({ snapshot: { method: 'data-movement', driver: DRIVER, snapshotClass: GOLD, classSource: 'backup-annotation' } });
  });

  it('the PVC annotation velero.io/csi-volumesnapshot-class beats the Backup annotation', () => {
    const backup = annotated({ [backupSnapshotClassAnnotation(DRIVER)]: GOLD });
    expect(decide({ backup, pvcAnnotations: { 'velero.io/csi-volumesnapshot-class': 'silver' } })).toEqual({
      snapshot: { method: 'data-movement', driver: DRIVER, snapshotClass: 'silver', classSource: 'pvc-annotation' },
    });
  });

  it('an annotation for another driver, or none, leaves the labelled/default choice', () => {
    expect(decide({ backup: annotated({ 'velero.io/csi-volumesnapshot-class_ebs.csi.aws.com': 'ebs-snap' }) }).snapshot).toEqual({
      method: 'data-movement',
      driver: DRIVER,
      snapshotClass: 'csi-hostpath-snapclass',
      classSource: 'default',
    });
    expect(chooseSnapshotClass({ backup: backupWith(), driver: 'other.csi', classes })).toEqual({ none: true });
  });

  it('names are matched without regard to case, as Velero does', () => {
    expect(decide({ pvcAnnotations: { 'velero.io/csi-volumesnapshot-class': 'Gold' } }).snapshot?.snapshotClass).toBe(GOLD);
  });

  it('a PVC annotation naming a class that does not exist: not moved, the reason in volume info and a warning', () => {
    expect(decide({ pvcAnnotations: { 'velero.io/csi-volumesnapshot-class': 'platinum' } })).toEqual({
      skippedReason: "csiSnapshot: VolumeSnapshotClass platinum does not exist (named by the PVC's annotation velero.io/csi-volumesnapshot-class);",
      warning: "PVC shop/data is not moved: VolumeSnapshotClass platinum does not exist (named by the PVC's annotation velero.io/csi-volumesnapshot-class)",
    });
  });

  it("a Backup annotation naming another driver's class: not moved, with a warning (no silent fall-back)", () => {
    const backup = annotated({ [backupSnapshotClassAnnotation(DRIVER)]: 'ebs-snap' });
    expect(decide({ backup })).toEqual({
      skippedReason:
        "csiSnapshot: VolumeSnapshotClass ebs-snap is for the CSI driver ebs.csi.aws.com, not hostpath.csi.k8s.io (named by the backup's annotation velero.io/csi-volumesnapshot-class_hostpath.csi.k8s.io);",
      warning:
        "PVC shop/data is not moved: VolumeSnapshotClass ebs-snap is for the CSI driver ebs.csi.aws.com, not hostpath.csi.k8s.io (named by the backup's annotation velero.io/csi-volumesnapshot-class_hostpath.csi.k8s.io)",
    });
  });

  it('the other reasons still come first (a claim fs-backup took is not warned about)', () => {
    const d = decideVolumeSnapshot({
      backup: backupWith(),
      claim: { ...claim, annotations: { 'velero.io/csi-volumesnapshot-class': 'platinum' } },
      takenByFsBackup: new Set([PVC_UID]),
      driver: DRIVER,
      classes,
    });
    expect(d).toEqual({ skippedReason: 'csiSnapshot: the volume is backed up by pod volume backup;' });
  });
});

describe('csiSnapshotTimeout', () => {
  it("is the DataUpload's operationTimeout, as in Velero (10m when the backup has none); itemOperationTimeout is not", () => {
    const du = (spec: Backup['spec']) => dataUploadFor({ backup: backupWith(spec), claim, volumeSnapshot: 'vs', snapshotClass: 'c', driver: DRIVER });
    expect(du({ csiSnapshotTimeout: '2m0s', itemOperationTimeout: '1h0m0s' }).spec.operationTimeout).toBe('2m0s');
    expect(du({ csiSnapshotTimeout: undefined }).spec.operationTimeout).toBe('10m0s');
    expect(csiSnapshotTimeoutOf(backupWith({ csiSnapshotTimeout: '30s' }))).toBe('30s');
  });

  it("the server's item operation timeout is the backup's, whatever the DataUpload's operationTimeout says", () => {
    const backup = backupWith({ itemOperationTimeout: '1h0m0s', csiSnapshotTimeout: '1m0s' });
    const d = dataUploadFor({ backup, claim, volumeSnapshot: 'vs', snapshotClass: 'c', driver: DRIVER });
    const created = Date.parse('2026-01-01T00:00:00Z');
    const running = { ...d, metadata: { ...d.metadata, name: 'nightly-a', creationTimestamp: '2026-01-01T00:00:00Z' }, status: { phase: 'InProgress' } } as DataUpload;
    expect(d.spec.operationTimeout).toBe('1m0s');
    expect(itemOperationTimeoutMs(backup)).toBe(3600_000);
    const at30m = trackDataUploads({ dataUploads: [running], timeoutMs: itemOperationTimeoutMs(backup), startedMs: created, nowMs: created + 30 * 60_000 });
    expect(at30m).toMatchObject({ done: false, expired: [] });
  });
});

describe('VolumeSnapshot and DataUpload', () => {
  it('the source VolumeSnapshot: generateName velero-<pvc>-, backup labels, source and class', () => {
    expect(volumeSnapshotFor({ backup: backupWith(), claim, snapshotClass: 'csi-hostpath-snapclass' })).toEqual({
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { generateName: 'velero-data-', namespace: 'shop', labels: { 'velero.io/backup-name': 'nightly', 'velero.io/backup-uid': BACKUP_UID } },
      spec: { source: { persistentVolumeClaimName: 'data' }, volumeSnapshotClassName: 'csi-hostpath-snapclass' },
    });
  });

  it('a long PVC name is cut so the generated name stays valid', () => {
    const g = volumeSnapshotGenerateName(`${'a'.repeat(60)}-b`);
    expect(g.length).toBeLessThanOrEqual(58);
    expect(g).toMatch(/^velero-a+-$/);
  });

  it("the DataUpload: Velero's labels, owner and spec", () => {
    const du = dataUploadFor({ backup: backupWith(), claim, volumeSnapshot: 'velero-data-x7k2p', snapshotClass: 'csi-hostpath-snapclass', driver: DRIVER });
    const opId = du.metadata.labels?.['velero.io/async-operation-id'] ?? '';
    expect(opId.length).toBeLessThanOrEqual(63);
    expect(opId.startsWith(`du-${BACKUP_UID}.`)).toBe(true);
    expect(opId).toBe(dataUploadOperationId(BACKUP_UID, PVC_UID));
    expect(du.metadata).toEqual({
      namespace: 'cairn',
      generateName: 'nightly-',
      labels: { 'velero.io/backup-name': 'nightly', 'velero.io/backup-uid': BACKUP_UID, 'velero.io/pvc-uid': PVC_UID, 'velero.io/async-operation-id': opId },
      ownerReferences: [{ apiVersion: 'velero.io/v1', kind: 'Backup', name: 'nightly', uid: BACKUP_UID, controller: true }],
    });
    expect(du.spec).toEqual({
      snapshotType: 'CSI',
      csiSnapshot: { volumeSnapshot: 'velero-data-x7k2p', storageClass: 'csi-hostpath-sc', snapshotClass: 'csi-hostpath-snapclass', driver: DRIVER },
      sourcePVC: 'data',
      sourceNamespace: 'shop',
      backupStorageLocation: 'default',
      datamover: 'velero',
      operationTimeout: '10m0s',
    });
    expect(operationIdOfDataUpload(du)).toBe(opId);
  });

  it('--data-mover and the CSI snapshot timeout go into the DataUpload', () => {
    const du = dataUploadFor({ backup: backupWith({ datamover: 'acme', csiSnapshotTimeout: '30m0s' }), claim, volumeSnapshot: 'vs', snapshotClass: 'c', driver: DRIVER });
    expect(du.spec).toMatchObject({ datamover: 'acme', operationTimeout: '30m0s' });
  });
});

function du(name: string, status: DataUpload['status'], created = '2026-01-01T00:00:00Z'): DataUpload {
  const d = dataUploadFor({ backup: backupWith(), claim: { ...claim, name, uid: `uid-${name}` }, volumeSnapshot: `velero-${name}-abcde`, snapshotClass: 'csi-hostpath-snapclass', driver: DRIVER });
  return { ...d, metadata: { ...d.metadata, name: `nightly-${name}`, creationTimestamp: created }, ...(status ? { status } : {}) } as DataUpload;
}

describe('tracking DataUploads', () => {
  const created = Date.parse('2026-01-01T00:00:00Z');

  it('counts terminal ones and waits for the others', () => {
    const s = trackDataUploads({
      dataUploads: [du('a', { phase: 'Completed' }), du('b', { phase: 'Failed' }), du('c', { phase: 'InProgress' }), du('d', undefined)],
      timeoutMs: 3600_000,
      startedMs: created,
      nowMs: created + 60_000,
    });
    expect(s).toMatchObject({ attempted: 4, completed: 1, failed: 1, done: false, expired: [], nextDeadlineMs: created + 3600_000 });
    expect(s.pending.map((d) => d.metadata.name)).toEqual(['nightly-c', 'nightly-d']);
  });

  it('past the item operation timeout the pending ones expire and the backup can finish', () => {
    const s = trackDataUploads({ dataUploads: [du('a', { phase: 'Completed' }), du('c', { phase: 'InProgress' })], timeoutMs: 60_000, startedMs: created, nowMs: created + 60_000 });
    expect(s.done).toBe(true);
    expect(s.expired.map((d) => d.metadata.name)).toEqual(['nightly-c']);
  });

  it('the timeout comes from the backup (4 h when unset)', () => {
    expect(itemOperationTimeoutMs(backupWith({ itemOperationTimeout: '20s' }))).toBe(20_000);
    expect(itemOperationTimeoutMs(backupWith({ itemOperationTimeout: undefined }))).toBe(4 * 3600_000);
  });

  it('errors by PVC namespace for failed, canceled and timed-out ones', () => {
    const errors = dataUploadErrors([du('a', { phase: 'Completed' }), du('b', { phase: 'Failed', message: 'disk gone' }), du('c', { phase: 'Canceled' }), du('d', { phase: 'Accepted' })], new Set(['nightly-d']));
    expect(errors).toEqual([
      { namespace: 'shop', message: 'data upload nightly-b of PVC shop/b failed: disk gone' },
      { namespace: 'shop', message: 'data upload nightly-c of PVC shop/c was canceled' },
      { namespace: 'shop', message: 'data upload nightly-d of PVC shop/d timed out in phase Accepted' },
    ]);
  });
});

describe('item operations and volume info of DataUploads', () => {
  /** The claim whose DataUpload the volume info tests follow, and its volume. */
  const dataClaim = { pvcName: 'data', pvcNamespace: 'shop', pvName: 'pvc-1' };

  const now = new Date('2026-01-01T01:00:00Z');

  it('one velero.io/csi-pvc-backupper operation per DataUpload', () => {
    const d = du('data', { phase: 'Completed', startTimestamp: '2026-01-01T00:00:10Z', completionTimestamp: '2026-01-01T00:05:00Z', progress: { totalBytes: 4096, bytesDone: 4096 }, snapshotID: 'k123' });
    expect(dataUploadOperationFor({ backup: backupWith(), du: d, now })).toEqual({
      spec: {
        backupName: 'nightly',
        backupUID: BACKUP_UID,
        backupItemAction: 'velero.io/csi-pvc-backupper',
        resourceIdentifier: { Group: '', Resource: 'persistentvolumeclaims', Namespace: 'shop', Name: 'data' },
        operationID: dataUploadOperationId(BACKUP_UID, 'uid-data'),
        postOperationItems: null,
      },
      status: {
        phase: 'Completed',
        nCompleted: 4096,
        nTotal: 4096,
        operationUnits: 'Bytes',
        description: 'Completed',
        created: '2026-01-01T00:00:00Z',
        started: '2026-01-01T00:00:10Z',
        updated: '2026-01-01T00:05:00Z',
      },
    });
  });

  it('phases map to New / InProgress / Failed; a timed-out one is Failed with the reason', () => {
    expect(dataUploadOperationFor({ backup: backupWith(), du: du('a', undefined), now }).status.phase).toBe('New');
    expect(dataUploadOperationFor({ backup: backupWith(), du: du('a', { phase: 'Prepared' }), now }).status.phase).toBe('InProgress');
    expect(dataUploadOperationFor({ backup: backupWith(), du: du('a', { phase: 'Canceled' }), now }).status.phase).toBe('Failed');
    const timedOut = dataUploadOperationFor({ backup: backupWith(), du: du('a', { phase: 'InProgress' }), now, timedOut: true });
    expect(timedOut.status).toMatchObject({ phase: 'Failed', error: 'data upload nightly-a of PVC shop/a timed out in phase InProgress' });
  });

  it('the volume info entry: CSISnapshot, data moved, with the DataUpload snapshot and size', () => {
    const base: BackupVolumeInfo = { ...dataClaim, snapshotDataMoved: true, preserveLocalSnapshot: false, skipped: false, pvInfo: { reclaimPolicy: 'Delete', labels: null } };
    const csi = { snapshotHandle: 'snap-1', size: 16777216, driver: DRIVER, vscName: 'snapcontent-1', ReadyToUse: true };
    const entry = dataMovementVolumeInfo(du('data', { phase: 'Completed', snapshotID: 'k123', progress: { totalBytes: 4096, bytesDone: 4096 }, startTimestamp: '2026-01-01T00:00:10Z', completionTimestamp: '2026-01-01T00:05:00Z' }), base, csi);
    expect(entry).toEqual({
      pvcName: 'data',
      pvcNamespace: 'shop',
      pvName: 'pvc-1',
      backupMethod: 'CSISnapshot',
      snapshotDataMoved: true,
      preserveLocalSnapshot: false,
      skipped: false,
      startTimestamp: '2026-01-01T00:00:10Z',
      completionTimestamp: '2026-01-01T00:05:00Z',
      result: 'succeeded',
      csiSnapshotInfo: csi,
      snapshotDataMovementInfo: { dataMover: 'velero', uploaderType: 'kopia', snapshotHandle: 'k123', operationID: dataUploadOperationId(BACKUP_UID, 'uid-data'), size: 4096, Phase: 'Completed' },
      pvInfo: { reclaimPolicy: 'Delete', labels: null },
    });
    // Keys in Velero's order.
    expect(Object.keys(entry)).toEqual(['pvcName', 'pvcNamespace', 'pvName', 'backupMethod', 'snapshotDataMoved', 'preserveLocalSnapshot', 'skipped', 'startTimestamp', 'completionTimestamp', 'result', 'csiSnapshotInfo', 'snapshotDataMovementInfo', 'pvInfo']);
  });

  it('merging keeps other entries, replaces the PVC entry, keeps the stored CSI details when the snapshot is gone', () => {
    const stored: BackupVolumeInfo[] = [
      { pvcName: 'logs', pvcNamespace: 'shop', pvName: 'pv-logs', backupMethod: 'PodVolumeBackup', snapshotDataMoved: false, preserveLocalSnapshot: false, skipped: false },
      { ...dataClaim, backupMethod: 'CSISnapshot', snapshotDataMoved: true, preserveLocalSnapshot: false, skipped: false, csiSnapshotInfo: { snapshotHandle: 'snap-1', size: 1, driver: DRIVER, vscName: 'vsc', ReadyToUse: true } },
    ];
    const merged = mergeDataMovementVolumeInfo({ stored, dataUploads: [du('data', { phase: 'Failed' })] });
    expect(merged[0]).toBe(stored[0]);
    expect(merged[1]).toMatchObject({ pvName: 'pvc-1', result: 'failed', csiSnapshotInfo: { snapshotHandle: 'snap-1' }, snapshotDataMovementInfo: { Phase: 'Failed' } });
    // A DataUpload with no stored entry gets one; a timed-out one is failed.
    const added = mergeDataMovementVolumeInfo({ stored: [], dataUploads: [du('other', { phase: 'InProgress' })], timedOut: new Set(['nightly-other']) });
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ pvcName: 'other', result: 'failed' });
  });

  it('moved snapshots to delete: from DataUploads and volume info, once each', () => {
    const info: BackupVolumeInfo[] = [
      { pvcName: 'data', pvcNamespace: 'shop', snapshotDataMoved: true, preserveLocalSnapshot: false, skipped: false, snapshotDataMovementInfo: { dataMover: 'velero', uploaderType: 'kopia', snapshotHandle: 'k1', operationID: 'x', size: 1, Phase: 'Completed' } },
      { pvcName: 'logs', pvcNamespace: 'shop', snapshotDataMoved: false, preserveLocalSnapshot: false, skipped: false, pvbInfo: { snapshotHandle: 'pvb-snap', uploaderType: 'kopia', volumeName: 'logs', podName: 'p', podNamespace: 'shop', Phase: 'Completed' } },
    ];
    expect(movedSnapshotsOf([du('data', { phase: 'Completed', snapshotID: 'k1' }), du('x', { phase: 'Failed' })], info)).toEqual([{ volumeNamespace: 'shop', snapshotID: 'k1' }]);
  });
});

describe('volume info collector: CSI skip reasons', () => {
  it('replaces the resource-only reason, follows a fs-backup one, never marks a taken volume skipped', () => {
    const c = new BackupVolumeInfoCollector();
    c.addSkippedPv({ metadata: { name: 'pv-a' } });
    c.addCsiSnapshotSkip('pv-a', 'csiSnapshot: no VolumeSnapshotClass for the CSI driver x;');
    c.addSkippedPv({ metadata: { name: 'pv-b' } });
    c.addPodVolumeSkip('pv-b', 'pod is not running');
    c.addCsiSnapshotSkip('pv-b', 'csiSnapshot: PVC a/b is not bound;');
    c.addDataMovement({ pvcName: 'c', pvcNamespace: 'n', pvName: 'pv-c', backupMethod: 'CSISnapshot', snapshotDataMoved: true, preserveLocalSnapshot: false, skipped: false });
    c.addCsiSnapshotSkip('pv-c', 'csiSnapshot: whatever;');
    const byPv = new Map(c.toJSON().map((e) => [e.pvName, e]));
    expect(byPv.get('pv-a')?.skippedReason).toBe('csiSnapshot: no VolumeSnapshotClass for the CSI driver x;');
    expect(byPv.get('pv-b')?.skippedReason).toBe('podvolume: pod is not running; csiSnapshot: PVC a/b is not bound;');
    expect(byPv.get('pv-c')).toMatchObject({ skipped: false, backupMethod: 'CSISnapshot' });
    expect(byPv.get('pv-c')?.skippedReason).toBeUndefined();
    expect(NO_DATA_MOVED_REASON).toMatch(/^any: /);
  });
});
