import { describe, expect, it } from 'vitest';
import { newPodVolumeBackup, type PodVolumeBackup } from '../../../../src/api/index.js';
import { podVolumesOf, volumesToRestore } from '../../../../src/server/podvolume/restore-volumes.js';

function pvb(o: { pod: string; ns: string; volume: string; snapshotID?: string; phase?: string; totalBytes?: number; bsl?: string }): PodVolumeBackup {
  const b = newPodVolumeBackup({
    namespace: 'velero',
    generateName: 'b1-',
    spec: {
      node: 'n1',
      pod: { kind: 'Pod', namespace: o.ns, name: o.pod, uid: 'old-uid' },
      volume: o.volume,
      backupStorageLocation: o.bsl ?? 'default',
      repoIdentifier: '',
      uploaderType: 'kopia',
    },
  });
  b.status = {
    phase: (o.phase ?? 'Completed') as NonNullable<PodVolumeBackup['status']>['phase'],
    ...(o.snapshotID !== undefined ? { snapshotID: o.snapshotID } : {}),
    ...(o.totalBytes !== undefined ? { progress: { totalBytes: o.totalBytes, bytesDone: o.totalBytes } } : {}),
  };
  return b;
}

const podVolumes = [
  { name: 'data', persistentVolumeClaim: { claimName: 'data-claim' } },
  { name: 'scratch', emptyDir: {} },
  { name: 'info', downwardAPI: { items: [] } },
  { name: 'token', projected: { sources: [] } },
  { name: 'empty', emptyDir: {} },
];

describe('which volumes of a restored pod get fs-backup data', () => {
  const pvbs = [
    pvb({ pod: 'web-0', ns: 'app', volume: 'data', snapshotID: 's-data', totalBytes: 42, bsl: 'primary' }),
    pvb({ pod: 'web-0', ns: 'app', volume: 'scratch', snapshotID: 's-scratch' }),
    pvb({ pod: 'web-0', ns: 'app', volume: 'empty', snapshotID: '' }), // empty volume: nothing to restore
    pvb({ pod: 'web-0', ns: 'app', volume: 'info', snapshotID: 's-info' }), // downwardAPI: the pod fills it
    pvb({ pod: 'web-0', ns: 'app', volume: 'token', snapshotID: 's-token' }), // projected
    pvb({ pod: 'web-0', ns: 'app', volume: 'gone', snapshotID: 's-gone' }), // not declared by the pod any more
    pvb({ pod: 'web-1', ns: 'app', volume: 'data', snapshotID: 's-other-pod' }),
    pvb({ pod: 'web-0', ns: 'other', volume: 'data', snapshotID: 's-other-ns' }),
  ];

  it('matches the backup-time pod, skips empty, projected, downwardAPI and undeclared volumes', () => {
    expect(volumesToRestore({ podVolumeBackups: pvbs, podName: 'web-0', sourceNamespace: 'app', podVolumes })).toEqual([
      { volume: 'data', snapshotID: 's-data', uploaderType: 'kopia', claimName: 'data-claim', totalBytes: 42 },
      { volume: 'scratch', snapshotID: 's-scratch', uploaderType: 'kopia' },
    ]);
  });

  it('namespace mapping: matched by the original namespace, whatever the target is', () => {
    const found = volumesToRestore({ podVolumeBackups: pvbs, podName: 'web-0', sourceNamespace: 'other', podVolumes });
    expect(found.map((v) => v.snapshotID)).toEqual(['s-other-ns']);
  });

  it('ignores Failed and Canceled PVBs even when they carry a snapshot ID', () => {
    const bad = [
      pvb({ pod: 'p', ns: 'app', volume: 'data', snapshotID: 's1', phase: 'Failed' }),
      pvb({ pod: 'p', ns: 'app', volume: 'scratch', snapshotID: 's2', phase: 'Canceled' }),
    ];
    expect(volumesToRestore({ podVolumeBackups: bad, podName: 'p', sourceNamespace: 'app', podVolumes })).toEqual([]);
  });

  it('no PVBs, no volumes', () => {
    expect(volumesToRestore({ podVolumeBackups: [], podName: 'web-0', sourceNamespace: 'app', podVolumes })).toEqual([]);
  });

  it('reads the volumes of an unstructured pod', () => {
    expect(podVolumesOf({ spec: { volumes: [{ name: 'a' }, 'junk', { nope: 1 }] } })).toEqual([{ name: 'a' }]);
    expect(podVolumesOf({})).toEqual([]);
  });
});
