import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../../../src/plugins/object-store/index.js';
import { BackupStore } from '../../../../src/storage/backup-store.js';

/** A PodVolumeBackup as Velero 1.17 stores it in `<backup>-podvolumebackups.json.gz` (metadata as the API server returns it). */
const veleroPvb = {
  metadata: {
    name: 'nightly-x7k2p',
    generateName: 'nightly-',
    namespace: 'velero',
    uid: '5d0c2c5e-0000-4000-8000-000000000001',
    resourceVersion: '1234',
    generation: 2,
    creationTimestamp: '2026-01-01T00:00:00Z',
    labels: { 'velero.io/backup-name': 'nightly', 'velero.io/backup-uid': 'b-uid', 'velero.io/pvc-uid': 'pvc-uid' },
    annotations: { 'velero.io/pvc-name': 'data' },
    ownerReferences: [{ apiVersion: 'velero.io/v1', kind: 'Backup', name: 'nightly', uid: 'b-uid', controller: true }],
    finalizers: ['velero.io/pod-volume-finalizer'],
    managedFields: [{ manager: 'velero-server', operation: 'Update', apiVersion: 'velero.io/v1', time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: {} }],
  },
  spec: {
    node: 'node-1',
    pod: { kind: 'Pod', namespace: 'app', name: 'web-0', uid: 'pod-uid' },
    volume: 'data',
    backupStorageLocation: 'default',
    repoIdentifier: '',
    uploaderType: 'kopia',
    tags: { backup: 'nightly', 'backup-uid': 'b-uid', ns: 'app', pod: 'web-0', 'pod-uid': 'pod-uid', volume: 'data', 'pvc-uid': 'pvc-uid' },
    uploaderSettings: null,
  },
  status: {
    phase: 'Completed',
    path: '/host_pods/pod-uid/volumes/kubernetes.io~csi/pv-1/mount',
    snapshotID: 'a'.repeat(64),
    startTimestamp: '2026-01-01T00:00:01Z',
    completionTimestamp: '2026-01-01T00:00:09Z',
    progress: { totalBytes: 100, bytesDone: 100 },
    acceptedTimestamp: '2026-01-01T00:00:00Z',
  },
};

describe('BackupStore.getPodVolumeBackups', () => {
  it('reads the PVBs stored with a backup, as Velero writes them', async () => {
    const store = new BackupStore(new FilesystemObjectStore({ root: mkdtempSync(join(tmpdir(), 'cairn-pvb-store-')), durability: 'none' }));
    expect(await store.getPodVolumeBackups('nightly')).toEqual([]);
    await store.putBackupJson('nightly', 'podVolumeBackups', [veleroPvb, null, { metadata: { name: 'broken' } }]);
    const pvbs = await store.getPodVolumeBackups('nightly');
    expect(pvbs).toHaveLength(1);
    expect(pvbs[0]).toMatchObject({ apiVersion: 'velero.io/v1', kind: 'PodVolumeBackup', metadata: { name: 'nightly-x7k2p' }, spec: { volume: 'data' }, status: { snapshotID: 'a'.repeat(64) } });
    await store.putBackupJson('nightly', 'podVolumeBackups', null);
    expect(await store.getPodVolumeBackups('nightly')).toEqual([]);
  });
});
