import { describe, expect, it } from 'vitest';
import { newBackup, type PodVolumeBackup } from '../../../../src/api/index.js';
import { podVolumeBackupFor, podVolumeKey } from '../../../../src/server/podvolume/backup-pvb.js';
import {
  backupOperationFor,
  fsBackupTimeoutMs,
  mergeVolumeInfo,
  podVolumeErrors,
  trackPodVolumeBackups,
  volumeInfoFor,
} from '../../../../src/server/podvolume/backup-tracking.js';
import { snapshotsOf } from '../../../../src/server/podvolume/backup-snapshots.js';
import type { ClaimInfo, PodLike } from '../../../../src/server/podvolume/backup-volumes.js';
import { NO_DATA_MOVED_REASON } from '../../../../src/api/volume-info.js';
import { BackupVolumeInfoCollector } from '../../../../src/server/backup/volume-info-collector.js';

const backup = newBackup({ namespace: 'cairn', name: 'b1', spec: { storageLocation: 'default', uploaderConfig: { parallelFilesUpload: 4 } } });
backup.metadata.uid = 'backup-uid';
const pod: PodLike = { metadata: { name: 'web-0', namespace: 'app', uid: 'pod-uid' }, spec: { nodeName: 'node-2' }, status: { phase: 'Running' } };
const claim: ClaimInfo = {
  pvc: { metadata: { name: 'data-pvc', namespace: 'app', uid: 'pvc-uid' }, spec: { volumeName: 'pv-1' } },
  pv: { metadata: { name: 'pv-1', labels: { a: 'b' } }, spec: { persistentVolumeReclaimPolicy: 'Retain' } },
};

function withStatus(pvb: PodVolumeBackup, name: string, status: PodVolumeBackup['status']): PodVolumeBackup {
  return { ...pvb, metadata: { ...pvb.metadata, name, creationTimestamp: '2026-01-01T00:00:00Z' }, status } as PodVolumeBackup;
}

describe('PodVolumeBackup objects', () => {
  it("PVC volume: Velero's labels, annotation, tags, owner and spec", () => {
    const pvb = podVolumeBackupFor({ backup, pod, volume: 'data', claim });
    expect(pvb.metadata).toEqual({
      namespace: 'cairn',
      generateName: 'b1-',
      labels: { 'velero.io/backup-name': 'b1', 'velero.io/backup-uid': 'backup-uid', 'velero.io/pvc-uid': 'pvc-uid' },
      annotations: { 'velero.io/pvc-name': 'data-pvc' },
      ownerReferences: [{ apiVersion: 'velero.io/v1', kind: 'Backup', name: 'b1', uid: 'backup-uid', controller: true }],
    });
    expect(pvb.spec).toEqual({
      node: 'node-2',
      pod: { kind: 'Pod', namespace: 'app', name: 'web-0', uid: 'pod-uid' },
      volume: 'data',
      backupStorageLocation: 'default',
      repoIdentifier: '',
      uploaderType: 'kopia',
      tags: { backup: 'b1', 'backup-uid': 'backup-uid', pod: 'web-0', 'pod-uid': 'pod-uid', ns: 'app', volume: 'data', 'pvc-uid': 'pvc-uid' },
      uploaderSettings: { ParallelFilesUpload: '4' },
    });
    expect(pvb.status).toBeUndefined();
    expect(podVolumeKey(pvb)).toBe('pod-uid/data');
  });

  it('emptyDir volume: no PVC label, annotation or tag', () => {
    const pvb = podVolumeBackupFor({ backup, pod, volume: 'cache' });
    expect(pvb.metadata.labels).toEqual({ 'velero.io/backup-name': 'b1', 'velero.io/backup-uid': 'backup-uid' });
    expect(pvb.metadata.annotations).toBeUndefined();
    expect(pvb.spec.tags?.['pvc-uid']).toBeUndefined();
  });

  it('long backup names are shortened in the label the way Velero does', () => {
    const long = newBackup({ namespace: 'cairn', name: 'x'.repeat(70), spec: {} });
    const pvb = podVolumeBackupFor({ backup: long, pod, volume: 'cache' });
    expect(pvb.metadata.labels?.['velero.io/backup-name']).toHaveLength(63);
    expect(pvb.spec.tags?.backup).toBe('x'.repeat(70));
  });
});

describe('tracking a backup’s PodVolumeBackups', () => {
  const base = podVolumeBackupFor({ backup, pod, volume: 'data', claim });
  const done = withStatus(base, 'b1-aaa', { phase: 'Completed', snapshotID: 'f'.repeat(64), progress: { totalBytes: 100, bytesDone: 100 }, startTimestamp: '2026-01-01T00:00:01Z', completionTimestamp: '2026-01-01T00:00:05Z' });
  const failed = withStatus({ ...base, spec: { ...base.spec, volume: 'cache' } }, 'b1-bbb', { phase: 'Failed', message: 'data path failed' });
  const running = withStatus({ ...base, spec: { ...base.spec, volume: 'logs' } }, 'b1-ccc', { phase: 'InProgress', progress: { totalBytes: 50, bytesDone: 10 } });
  const canceled = withStatus({ ...base, spec: { ...base.spec, volume: 'tmp' } }, 'b1-ddd', { phase: 'Canceled', message: 'canceled by user' });

  it('waits while any PVB is not terminal, then reports completed and failed counts', () => {
    const waiting = trackPodVolumeBackups({ pvbs: [done, running], startedMs: 0, timeoutMs: 1000, nowMs: 500 });
    expect(waiting).toMatchObject({ attempted: 2, completed: 1, failed: 0, allTerminal: false, timedOut: false, deadlineMs: 1000 });
    const finished = trackPodVolumeBackups({ pvbs: [done, failed, canceled], startedMs: 0, timeoutMs: 1000, nowMs: 500 });
    expect(finished).toMatchObject({ attempted: 3, completed: 1, failed: 2, allTerminal: true, timedOut: false });
  });

  it('times out only with PVBs still pending past the deadline', () => {
    expect(trackPodVolumeBackups({ pvbs: [done, running], startedMs: 0, timeoutMs: 1000, nowMs: 1000 }).timedOut).toBe(true);
    expect(trackPodVolumeBackups({ pvbs: [done], startedMs: 0, timeoutMs: 1000, nowMs: 5000 }).timedOut).toBe(false);
  });

  it('the timeout comes from the backup annotation, else the server flag', () => {
    expect(fsBackupTimeoutMs(backup, 240 * 60_000)).toBe(240 * 60_000);
    const annotated = { ...backup, metadata: { ...backup.metadata, annotations: { 'velero.io/pod-volume-timeout': '30s' } } };
    expect(fsBackupTimeoutMs(annotated, 240 * 60_000)).toBe(30_000);
    const broken = { ...backup, metadata: { ...backup.metadata, annotations: { 'velero.io/pod-volume-timeout': 'soon' } } };
    expect(fsBackupTimeoutMs(broken, 1234)).toBe(1234);
  });

  it("errors in Velero's words; pending ones only when timed out", () => {
    expect(podVolumeErrors([done, failed, canceled, running], false)).toEqual([
      { namespace: 'app', message: 'pod volume backup failed: data path failed' },
      { namespace: 'app', message: 'pod volume backup canceled: canceled by user' },
    ]);
    expect(podVolumeErrors([running], true)[0]?.message).toContain('pod volume backup timed out: b1-ccc (volume logs of pod app/web-0) was still InProgress');
  });

  it('one item operation per PVB', () => {
    const now = new Date('2026-01-01T00:00:09Z');
    expect(backupOperationFor({ backup, pvb: done, now })).toEqual({
      spec: {
        backupName: 'b1',
        backupUID: 'backup-uid',
        backupItemAction: 'velero.io/pod-volume-backup',
        resourceIdentifier: { Group: '', Resource: 'pods', Namespace: 'app', Name: 'web-0' },
        operationID: 'pvb-b1-aaa',
        postOperationItems: null,
      },
      status: {
        phase: 'Completed',
        nCompleted: 100,
        nTotal: 100,
        operationUnits: 'Bytes',
        description: 'Completed',
        created: '2026-01-01T00:00:00Z',
        started: '2026-01-01T00:00:01Z',
        updated: '2026-01-01T00:00:05Z',
      },
    });
    expect(backupOperationFor({ backup, pvb: failed, now }).status).toMatchObject({ phase: 'Failed', error: 'pod volume backup failed: data path failed' });
    expect(backupOperationFor({ backup, pvb: running, now }).status).toMatchObject({ phase: 'InProgress', nCompleted: 10, nTotal: 50, updated: '2026-01-01T00:00:09Z' });
    expect(backupOperationFor({ backup, pvb: running, now, timedOut: true }).status.phase).toBe('Failed');
  });

  it('volume info: PodVolumeBackup entries with pvbInfo, keeping the PVC/PV fields written at creation', () => {
    const collector = new BackupVolumeInfoCollector();
    collector.addSkippedPv({ metadata: { name: 'pv-1', labels: { a: 'b' } }, spec: { persistentVolumeReclaimPolicy: 'Retain', claimRef: { name: 'data-pvc', namespace: 'app' } } });
    collector.addSkippedPv({ metadata: { name: 'pv-other' }, spec: { persistentVolumeReclaimPolicy: 'Delete' } });
    collector.addPodVolume(volumeInfoFor(withStatus(base, 'b1-aaa', {}), { pvcName: 'data-pvc', pvcNamespace: 'app', pvName: 'pv-1', snapshotDataMoved: false, preserveLocalSnapshot: false, skipped: false }));
    collector.addPodVolume(volumeInfoFor(withStatus({ ...base, metadata: { ...base.metadata, annotations: {} }, spec: { ...base.spec, volume: 'cache' } }, 'b1-eee', {})));
    const interim = collector.toJSON();
    expect(interim.map((e) => [e.pvName, e.backupMethod ?? null, e.skipped])).toEqual([
      ['pv-other', null, true],
      ['pv-1', 'PodVolumeBackup', false],
      [undefined, 'PodVolumeBackup', false],
    ]);
    expect(interim[0]?.skippedReason).toBe(NO_DATA_MOVED_REASON);
    expect(interim[1]?.pvInfo).toEqual({ reclaimPolicy: 'Retain', labels: { a: 'b' } });

    const emptyDone = withStatus({ ...base, metadata: { ...base.metadata, annotations: {} }, spec: { ...base.spec, volume: 'cache' } }, 'b1-eee', { phase: 'Completed', message: 'volume was empty so no snapshot was taken' });
    const final = mergeVolumeInfo(interim, [done, emptyDone]);
    expect(final).toHaveLength(3);
    const pvEntry = final.find((e) => e.pvName === 'pv-1');
    expect(pvEntry).toEqual({
      pvcName: 'data-pvc',
      pvcNamespace: 'app',
      pvName: 'pv-1',
      backupMethod: 'PodVolumeBackup',
      snapshotDataMoved: false,
      preserveLocalSnapshot: false,
      skipped: false,
      startTimestamp: '2026-01-01T00:00:01Z',
      completionTimestamp: '2026-01-01T00:00:05Z',
      result: 'succeeded',
      pvbInfo: { snapshotHandle: 'f'.repeat(64), size: 100, uploaderType: 'kopia', volumeName: 'data', podName: 'web-0', podNamespace: 'app', nodeName: 'node-2', Phase: 'Completed' },
      pvInfo: { reclaimPolicy: 'Retain', labels: { a: 'b' } },
    });
    expect(Object.keys(pvEntry ?? {})).toEqual(['pvcName', 'pvcNamespace', 'pvName', 'backupMethod', 'snapshotDataMoved', 'preserveLocalSnapshot', 'skipped', 'startTimestamp', 'completionTimestamp', 'result', 'pvbInfo', 'pvInfo']);
    const empty = final.find((e) => e.pvbInfo?.volumeName === 'cache');
    expect(empty).toMatchObject({ backupMethod: 'PodVolumeBackup', result: 'succeeded', pvbInfo: { Phase: 'Completed', uploaderType: 'kopia' } });
    expect(empty?.pvbInfo?.snapshotHandle).toBeUndefined();
    expect(empty?.pvName).toBeUndefined();
    // Running the merge again over its own output changes nothing.
    expect(mergeVolumeInfo(final, [done, emptyDone])).toEqual(final);
  });

  it('a failed volume is recorded as failed', () => {
    expect(volumeInfoFor(failed).result).toBe('failed');
  });

  it('snapshots to delete: distinct, per namespace, none for empty volumes', () => {
    const other = withStatus({ ...base, spec: { ...base.spec, pod: { ...base.spec.pod, namespace: 'other' } } }, 'b1-x', { phase: 'Completed', snapshotID: 'e'.repeat(64) });
    expect(snapshotsOf([done, done, failed, other])).toEqual([
      { volumeNamespace: 'app', snapshotID: 'f'.repeat(64) },
      { volumeNamespace: 'other', snapshotID: 'e'.repeat(64) },
    ]);
  });
});
