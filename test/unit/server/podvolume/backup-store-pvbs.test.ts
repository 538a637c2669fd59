import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../../../src/plugins/object-store/index.js';
import { BackupStore } from '../../../../src/storage/backup-store.js';
import { validObjects } from '../../api/valid-objects.js';

const valid = validObjects.PodVolumeBackup;

/**
 * A PodVolumeBackup as Velero 1.17 stores it in `<backup>-podvolumebackups.json.gz`: without apiVersion and kind,
 * metadata as the API server returns it.
 */
const veleroPvb = {
  metadata: {
    ...valid.metadata,
    generateName: 'nightly-1-',
    uid: '5d0c2c5e-0000-4000-8000-000000000001',
    resourceVersion: '1234',
    generation: 2,
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'velero-server', operation: 'Update', apiVersion: 'velero.io/v1', time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: {} }],
  },
  spec: valid.spec,
  status: valid.status,
};

describe('BackupStore.getPodVolumeBackups', () => {
  it('reads the PVBs stored with a backup, as Velero writes them', async () => {
    const store = new BackupStore(new FilesystemObjectStore({ root: mkdtempSync(join(tmpdir(), 'cairn-pvb-store-')), durability: 'none' }));
    expect(await store.getPodVolumeBackups('nightly-1')).toEqual([]);
    await store.putBackupJson('nightly-1', 'podVolumeBackups', [veleroPvb, null, { metadata: { name: 'broken' } }]);
    const pvbs = await store.getPodVolumeBackups('nightly-1');
    expect(pvbs).toHaveLength(1);
    expect(pvbs[0]).toMatchObject({ apiVersion: 'velero.io/v1', kind: 'PodVolumeBackup', metadata: { name: 'nightly-1-x7k2p' }, spec: { volume: 'data' }, status: { snapshotID: 'k0123456789abcdef' } });
    await store.putBackupJson('nightly-1', 'podVolumeBackups', null);
    expect(await store.getPodVolumeBackups('nightly-1')).toEqual([]);
  });
});
