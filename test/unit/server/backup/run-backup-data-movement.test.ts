import { describe, expect, it } from 'vitest';
import type { Backup, PodVolumeBackup } from '../../../../src/api/index.js';
import { runBackup } from '../../../../src/server/backup/run-backup.js';
import type { DataUploadsOutcome, PersistentVolumeClaimItem, VolumeSnapshotCreator } from '../../../../src/server/datamover/backup-creator.js';
import { dataUploadFor } from '../../../../src/server/datamover/backup-objects.js';
import { initialDataMovementEntry } from '../../../../src/server/datamover/backup-tracking.js';
import type { PodVolumeBackupCreator } from '../../../../src/server/podvolume/backup-creator.js';
import { podVolumeBackupFor } from '../../../../src/server/podvolume/backup-pvb.js';
import { volumeInfoFor } from '../../../../src/server/podvolume/backup-tracking.js';
import { fakePodVolumes, podVolumesOutcome, runBackupFixture } from './run-backup-fixture.js';

/** fs-backup takes the claim `logs` of every pod (its PVB carries the claim's UID, as the real creator's does). */
function fsBackupOfLogs(backup: Backup): PodVolumeBackupCreator {
  return fakePodVolumes((pod) => {
    const claim = { pvc: { metadata: { name: 'logs', namespace: 'app', uid: 'uid-persistentvolumeclaims-app-logs' }, spec: { volumeName: 'pv-logs' } } };
    const pvb = { ...podVolumeBackupFor({ backup, pod, volume: 'logs', claim }), metadata: { ...podVolumeBackupFor({ backup, pod, volume: 'logs', claim }).metadata, name: `b1-${pod.metadata.name}` } } as PodVolumeBackup;
    return podVolumesOutcome({ pvbs: [pvb], volumeInfo: [volumeInfoFor(pvb, { pvcName: 'logs', pvcNamespace: 'app', pvName: 'pv-logs', snapshotDataMoved: false, preserveLocalSnapshot: false, skipped: false })] });
  });
}

/** Moves every considered claim fs-backup did not take; remembers what it was asked. */
function recordingMover(backup: Backup, enabled: boolean, warnAbout?: string) {
  const considered: string[] = [];
  const taken: string[][] = [];
  const mover = {
    enabled,
    consider: (pvc: PersistentVolumeClaimItem) => considered.push(pvc.metadata.name),
    createAll: async (opts: { takenByFsBackup: ReadonlySet<string> }): Promise<DataUploadsOutcome> => {
      taken.push([...opts.takenByFsBackup]);
      const out: DataUploadsOutcome = { dataUploads: [], csiSnapshots: [], skipped: [], volumeInfo: [], errors: [], warnings: [] };
      for (const name of considered) {
        const uid = `uid-persistentvolumeclaims-app-${name}`;
        if (name === warnAbout) {
          const why = "VolumeSnapshotClass platinum does not exist (named by the PVC's annotation velero.io/csi-volumesnapshot-class)";
          out.skipped.push({ pvName: `pv-${name}`, reason: `csiSnapshot: ${why};` });
          out.warnings.push({ namespace: 'app', message: `PVC app/${name} is not moved: ${why}` });
          continue;
        }
        if (opts.takenByFsBackup.has(uid)) {
          out.skipped.push({ pvName: `pv-${name}`, reason: 'csiSnapshot: the volume is backed up by pod volume backup;' });
          continue;
        }
        const claim = { namespace: 'app', name, uid, phase: 'Bound', volumeName: `pv-${name}`, storageClassName: 'csi-sc' };
        const du = dataUploadFor({ backup, claim, volumeSnapshot: `velero-${name}-x`, snapshotClass: 'snap', driver: 'csi.example' });
        du.metadata.name = `b1-${name}`;
        out.dataUploads.push(du);
        out.volumeInfo.push(initialDataMovementEntry({ du, pvName: `pv-${name}` }));
      }
      return out;
    },
  } as unknown as VolumeSnapshotCreator;
  return { mover, considered, taken };
}

function setup(snapshotMoveData: boolean, warnAbout?: string) {
  const { backup, api, options, gz } = runBackupFixture({ tempPrefix: 'cairn-run-backup-dm-', spec: { snapshotMoveData } });
  for (const name of ['data', 'logs']) {
    api.add('persistentvolumeclaims', { name, namespace: 'app', spec: { volumeName: `pv-${name}`, storageClassName: 'csi-sc' }, status: { phase: 'Bound' } });
    api.add('persistentvolumes', { name: `pv-${name}`, spec: { persistentVolumeReclaimPolicy: 'Delete', claimRef: { name, namespace: 'app' } } });
  }
  api.add('pods', {
    name: 'db',
    namespace: 'app',
    spec: { nodeName: 'n1', volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }, { name: 'logs', persistentVolumeClaim: { claimName: 'logs' } }] },
    status: { phase: 'Running' },
  });
  const { mover, considered, taken } = recordingMover(backup, snapshotMoveData, warnAbout);
  const opts = {
    ...options,
    podVolumes: fsBackupOfLogs(backup),
    volumeSnapshots: mover,
    onFinalizing: async (s: { phase: string; itemOperations: number }) => ({ ...backup, status: { phase: s.phase as 'Finalizing', backupItemOperationsAttempted: s.itemOperations } }),
  };
  return { opts, considered, taken, gz };
}

describe('runBackup with snapshot data movement', () => {
  it('decides after every pod, skipping the claim fs-backup took; waits for PVBs and DataUploads together', async () => {
    const { opts, considered, taken, gz } = setup(true);
    const outcome = await runBackup(opts);
    expect(considered.sort()).toEqual(['data', 'logs']);
    expect(taken).toEqual([['uid-persistentvolumeclaims-app-logs']]);
    expect(outcome).toMatchObject({ phase: 'WaitingForPluginOperations', itemOperations: 2, errors: 0 });
    const ops = (await gz('b1-itemoperations.json.gz')) as { spec: { backupItemAction: string; resourceIdentifier: { Name: string } }; status: { phase: string } }[];
    expect(ops.map((o) => [o.spec.backupItemAction, o.spec.resourceIdentifier.Name, o.status.phase])).toEqual([
      ['velero.io/pod-volume-backup', 'db'],
      ['velero.io/csi-pvc-backupper', 'data'],
    ].map(([a, n]) => [a, n, 'New']));
    const info = (await gz('b1-volumeinfo.json.gz')) as { pvcName?: string; pvName?: string; backupMethod?: string; snapshotDataMoved: boolean; pvInfo?: object }[];
    const byPvc = new Map(info.map((e) => [e.pvcName, e]));
    expect(byPvc.get('data')).toMatchObject({ pvName: 'pv-data', backupMethod: 'CSISnapshot', snapshotDataMoved: true, pvInfo: { reclaimPolicy: 'Delete', labels: null } });
    expect(byPvc.get('logs')).toMatchObject({ backupMethod: 'PodVolumeBackup', snapshotDataMoved: false });
    // The DataUpload and the VolumeSnapshot are not backup items.
    const list = (await gz('b1-resource-list.json.gz')) as Record<string, string[]>;
    expect(Object.keys(list).filter((k) => /DataUpload|VolumeSnapshot/.test(k))).toEqual([]);
  });

  it("a claim not moved because its snapshot class override cannot be used: a warning in the backup's results, skipped in volume info", async () => {
    const { opts, gz } = setup(true, 'data');
    const outcome = await runBackup(opts);
    expect(outcome).toMatchObject({ phase: 'WaitingForPluginOperations', itemOperations: 1, warnings: 1, errors: 0 });
    const results = (await gz('b1-results.gz')) as { warnings?: { namespaces?: Record<string, string[]> } };
    expect(results.warnings?.namespaces?.app).toEqual(["PVC app/data is not moved: VolumeSnapshotClass platinum does not exist (named by the PVC's annotation velero.io/csi-volumesnapshot-class)"]);
    const info = (await gz('b1-volumeinfo.json.gz')) as { pvcName?: string; skipped: boolean; skippedReason?: string }[];
    expect(info.find((e) => e.pvcName === 'data')).toMatchObject({ skipped: true, skippedReason: expect.stringContaining('platinum does not exist') as unknown });
  });

  it('a backup that does not ask for data movement never calls the mover', async () => {
    const { opts, considered, taken } = setup(false);
    const outcome = await runBackup(opts);
    expect(considered).toEqual([]);
    expect(taken).toEqual([]);
    expect(outcome).toMatchObject({ phase: 'WaitingForPluginOperations', itemOperations: 1 });
  });
});
