import { describe, expect, it } from 'vitest';
import { newPodVolumeBackup, type PodVolumeBackup } from '../../../../src/api/index.js';
import { ResultsCollector } from '../../../../src/api/results.js';
import { PodVolumeRestoreStarter } from '../../../../src/server/podvolume/restore-starter.js';
import { claimNotRestored, NotRestoredVolumes, podVolumesNotRestored } from '../../../../src/server/restore/unrestored-volumes.js';

function pvb(o: { volume: string; phase: string; snapshotID?: string; message?: string; pod?: string; name?: string }): PodVolumeBackup {
  const b = newPodVolumeBackup({
    namespace: 'velero',
    name: o.name ?? `b1-${o.volume}`,
    spec: { node: 'n1', pod: { kind: 'Pod', namespace: 'app', name: o.pod ?? 'web', uid: 'old' }, volume: o.volume, backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia' },
  });
  b.status = {
    phase: o.phase as NonNullable<PodVolumeBackup['status']>['phase'],
    ...(o.snapshotID ? { snapshotID: o.snapshotID } : {}),
    ...(o.message ? { message: o.message } : {}),
  };
  return b;
}

const volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web' } }, { name: 'scratch' }, { name: 'cache' }];
const pvbs = [
  pvb({ volume: 'data', phase: 'Failed', message: 'data path backup failed: s3: ECONNREFUSED on data/ab: (still failing after 9 attempts over 300 s)' }),
  pvb({ volume: 'scratch', phase: 'Canceled' }),
  pvb({ volume: 'cache', phase: 'Completed', snapshotID: 'snap' }),
  // A failed try and a later completed one: the volume's data is there.
  pvb({ volume: 'cache', phase: 'Failed', name: 'b0-cache' }),
  pvb({ volume: 'data', phase: 'Failed', pod: 'other' }),
];

describe('volumes whose backup failed or was canceled', () => {
  it('are found per pod volume, with why, and named as restored', () => {
    const found = podVolumesNotRestored({ podVolumeBackups: pvbs, podName: 'web', sourceNamespace: 'app', targetNamespace: 'app-copy', podVolumes: volumes, podVolumeDataRestored: true });
    expect(found.map((v) => [v.what, v.excluded, v.reason])).toEqual([
      ['volume "data" of pod web', false, 'its backup (PodVolumeBackup b1-data) failed: data path backup failed: s3: ECONNREFUSED on data/ab: (still failing after 9 attempts over 300 s)'],
      ['volume "scratch" of pod web', false, 'its backup (PodVolumeBackup b1-scratch) was canceled'],
    ]);
    expect(found[0]!.namespace).toBe('app-copy');
    expect(found[0]!.info).toEqual({
      pvcName: 'data-web',
      pvcNamespace: 'app-copy',
      restoreMethod: 'PodVolumeRestore',
      snapshotDataMoved: false,
      pvrInfo: { uploaderType: 'kopia', volumeName: 'data', podName: 'web', podNamespace: 'app-copy', Phase: 'Failed' },
      notRestored: found[0]!.reason,
    });
  });

  it('are left out by the restore when its filters exclude volume data, or the restored pod no longer has the volume', () => {
    const filtered = podVolumesNotRestored({ podVolumeBackups: pvbs, podName: 'web', sourceNamespace: 'app', targetNamespace: 'app', podVolumes: volumes, podVolumeDataRestored: false });
    expect(filtered.every((v) => v.excluded)).toBe(true);
    const modified = podVolumesNotRestored({ podVolumeBackups: pvbs, podName: 'web', sourceNamespace: 'app', targetNamespace: 'app', podVolumes: [{ name: 'scratch' }], podVolumeDataRestored: true });
    expect(modified.map((v) => [v.what, v.excluded])).toEqual([
      ['volume "data" of pod web', true],
      ['volume "scratch" of pod web', false],
    ]);
  });

  it('a claim whose data movement failed is found from the backup volume info; a moved or untouched one is not', () => {
    const infos = [
      { pvcName: 'db', pvcNamespace: 'app', snapshotDataMoved: true, result: 'failed', snapshotDataMovementInfo: { snapshotHandle: '', operationID: 'du-1', Phase: 'Failed' } },
      { pvcName: 'ok', pvcNamespace: 'app', snapshotDataMoved: true, result: 'succeeded', snapshotDataMovementInfo: { snapshotHandle: 'snap', Phase: 'Completed' } },
      { pvcName: 'plain', pvcNamespace: 'app', snapshotDataMoved: false },
    ];
    const db = claimNotRestored({ volumeInfos: infos, pvcName: 'db', sourceNamespace: 'app', targetNamespace: 'app', movedDataRestored: true });
    expect(db).toMatchObject({ what: 'persistent volume claim db', reason: 'its data movement (operation du-1) failed', excluded: false });
    expect(db?.info).toMatchObject({ pvcName: 'db', restoreMethod: 'CSISnapshot', snapshotDataMoved: true, notRestored: 'its data movement (operation du-1) failed' });
    expect(claimNotRestored({ volumeInfos: infos, pvcName: 'ok', sourceNamespace: 'app', targetNamespace: 'app', movedDataRestored: true })).toBeUndefined();
    expect(claimNotRestored({ volumeInfos: infos, pvcName: 'plain', sourceNamespace: 'app', targetNamespace: 'app', movedDataRestored: true })).toBeUndefined();
    expect(claimNotRestored({ volumeInfos: infos, pvcName: 'db', sourceNamespace: 'app', targetNamespace: 'app', movedDataRestored: false })?.excluded).toBe(true);
  });

  it('are a warning each and, unless left out, one error: the restore is PartiallyFailed', () => {
    const track = new NotRestoredVolumes();
    track.add(podVolumesNotRestored({ podVolumeBackups: pvbs, podName: 'web', sourceNamespace: 'app', targetNamespace: 'app', podVolumes: [{ name: 'scratch' }], podVolumeDataRestored: true }));
    // A server restart sees the pod again: counted once.
    track.add(podVolumesNotRestored({ podVolumeBackups: pvbs, podName: 'web', sourceNamespace: 'app', targetNamespace: 'app', podVolumes: [{ name: 'scratch' }], podVolumeDataRestored: true }));
    const results = new ResultsCollector();
    track.report(results);
    expect(results.toJSON()).toEqual({
      warnings: {
        namespaces: {
          app: [
            expect.stringMatching(/^volume "data" of pod web was not restored \(the restore leaves it out\): its backup \(PodVolumeBackup b1-data\) failed: /),
            'volume "scratch" of pod web was not restored: its backup (PodVolumeBackup b1-scratch) was canceled',
          ],
        },
      },
      errors: { velero: ['1 volume(s) were not restored because their backup failed or was canceled (see the warnings): app: volume "scratch" of pod web'] },
    });
    expect(track.volumeInfos()).toHaveLength(2);
  });

  it('only left-out volumes: warnings, no error', () => {
    const track = new NotRestoredVolumes();
    track.add(podVolumesNotRestored({ podVolumeBackups: pvbs, podName: 'web', sourceNamespace: 'app', targetNamespace: 'app', podVolumes: volumes, podVolumeDataRestored: false }));
    const results = new ResultsCollector();
    track.report(results);
    expect(results.warningCount).toBe(2);
    expect(results.errorCount).toBe(0);
  });

  it('the pod volume restore starter records them, and starts no restore when the restore leaves volume data out', async () => {
    const track = new NotRestoredVolumes();
    let created = 0;
    const creator = {
      createForPod: async () => {
        created++;
        return { podVolumeRestores: [], errors: [] };
      },
    };
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'app', uid: 'new' }, spec: { volumes } };
    const fromBackup = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'app' } };
    await new PodVolumeRestoreStarter(pvbs, creator, { volumes: track, podVolumeDataRestored: true }).afterPodCreated({ podFromBackup: fromBackup, pod });
    expect(created).toBe(1); // the cache volume
    expect(track.all.map((v) => v.what)).toEqual(['volume "data" of pod web', 'volume "scratch" of pod web']);
    await new PodVolumeRestoreStarter(pvbs, creator, { volumes: new NotRestoredVolumes(), podVolumeDataRestored: false }).afterPodCreated({ podFromBackup: fromBackup, pod });
    expect(created).toBe(1);
  });
});
