import { describe, expect, it } from 'vitest';
import { newRestore, parsePodVolumeRestore, type PodVolumeRestore, type Restore } from '../../../../src/api/index.js';
import { newPodVolumeRestoreFor, podSelector, uploaderSettings } from '../../../../src/server/podvolume/restore-pvr.js';
import { PodVolumeRestoreStarter } from '../../../../src/server/podvolume/restore-starter.js';
import { newPodVolumeBackup } from '../../../../src/api/index.js';

function restore(spec: Partial<Restore['spec']> = {}): Restore {
  const r = newRestore({ namespace: 'cairn', name: 'r1', spec: { backupName: 'b1', ...spec } });
  r.metadata.uid = 'restore-uid';
  return r;
}

describe('PodVolumeRestore objects', () => {
  it("carry Velero's metadata and spec: generateName, owner, labels, restored pod, snapshot, source namespace", () => {
    const pvr = newPodVolumeRestoreFor({
      namespace: 'cairn',
      restore: restore(),
      pod: { name: 'web-0', namespace: 'app-copy', uid: 'new-pod-uid' },
      volume: { volume: 'data', snapshotID: 'snap-1', uploaderType: 'kopia', claimName: 'data' },
      backupStorageLocation: 'default',
      sourceNamespace: 'app',
      pvcUID: 'pvc-uid',
    });
    expect(pvr).toEqual({
      apiVersion: 'velero.io/v1',
      kind: 'PodVolumeRestore',
      metadata: {
        namespace: 'cairn',
        generateName: 'r1-',
        labels: { 'velero.io/restore-name': 'r1', 'velero.io/restore-uid': 'restore-uid', 'velero.io/pod-uid': 'new-pod-uid', 'velero.io/pvc-uid': 'pvc-uid' },
        ownerReferences: [{ apiVersion: 'velero.io/v1', kind: 'Restore', name: 'r1', uid: 'restore-uid', controller: true }],
      },
      spec: {
        pod: { kind: 'Pod', namespace: 'app-copy', name: 'web-0', uid: 'new-pod-uid' },
        volume: 'data',
        backupStorageLocation: 'default',
        repoIdentifier: '',
        uploaderType: 'kopia',
        snapshotID: 'snap-1',
        sourceNamespace: 'app',
      },
    });
    // Valid against the CRD schema (name is given by the API server).
    expect(() => parsePodVolumeRestore({ ...pvr, metadata: { ...pvr.metadata, name: 'r1-abcde' } })).not.toThrow();
  });

  it('no pvc-uid label for non-PVC volumes; a long restore name is shortened in the label only', () => {
    const long = 'r'.repeat(70);
    const r = restore();
    r.metadata.name = long;
    const pvr = newPodVolumeRestoreFor({
      namespace: 'cairn',
      restore: r,
      pod: { name: 'p', namespace: 'a', uid: 'u' },
      volume: { volume: 'scratch', snapshotID: 's', uploaderType: 'kopia' },
      backupStorageLocation: 'default',
      sourceNamespace: 'a',
    });
    expect(pvr.metadata?.labels?.['velero.io/pvc-uid']).toBeUndefined();
    expect(pvr.metadata?.labels?.['velero.io/restore-name']).toHaveLength(63);
    expect(pvr.metadata?.generateName).toBe(`${long}-`);
  });

  it('uploader settings from the restore: WriteSparseFiles, ParallelFilesDownload', () => {
    expect(uploaderSettings(restore())).toBeUndefined();
    expect(uploaderSettings(restore({ uploaderConfig: { writeSparseFiles: true, parallelFilesDownload: 4 } }))).toEqual({ WriteSparseFiles: 'true', ParallelFilesDownload: '4' });
    expect(uploaderSettings(restore({ uploaderConfig: { parallelFilesDownload: 0 } }))).toBeUndefined();
  });

  it('PVRs of one restored pod are found by restore UID and pod UID', () => {
    expect(podSelector('ru', 'pu')).toBe('velero.io/restore-uid=ru,velero.io/pod-uid=pu');
  });
});

describe('starting the PVRs of a created pod', () => {
  const pvbs = [
    newPodVolumeBackup({
      namespace: 'cairn',
      name: 'b1-x',
      spec: { node: 'n', pod: { kind: 'Pod', namespace: 'app', name: 'web-0', uid: 'old' }, volume: 'data', backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia' },
    }),
  ];
  pvbs[0]!.status = { phase: 'Completed', snapshotID: 'snap-1' };

  it('asks for the volumes of the backup-time pod on the restored pod (new namespace and UID)', async () => {
    const calls: unknown[] = [];
    const starter = new PodVolumeRestoreStarter(pvbs, {
      createForPod: async (o) => {
        calls.push(o);
        return { podVolumeRestores: [{ metadata: { name: 'r1-a' } } as PodVolumeRestore], errors: [] };
      },
    });
    const errors = await starter.afterPodCreated({
      podFromBackup: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'app' } },
      pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'copy', uid: 'new' }, spec: { volumes: [{ name: 'data', emptyDir: {} }] } },
    });
    expect(errors).toEqual([]);
    expect(calls).toEqual([
      { pod: { name: 'web-0', namespace: 'copy', uid: 'new' }, sourceNamespace: 'app', volumes: [{ volume: 'data', snapshotID: 'snap-1', uploaderType: 'kopia' }] },
    ]);
    expect(starter.started).toHaveLength(1);
  });

  it('a pod without fs-backup volumes starts nothing', async () => {
    const starter = new PodVolumeRestoreStarter(pvbs, {
      createForPod: async () => {
        throw new Error('must not be called');
      },
    });
    const errors = await starter.afterPodCreated({
      podFromBackup: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'other', namespace: 'app' } },
      pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'other', namespace: 'app', uid: 'u' }, spec: { volumes: [{ name: 'data' }] } },
    });
    expect(errors).toEqual([]);
    expect(starter.started).toEqual([]);
  });
});
