import { describe, expect, it } from 'vitest';
import { newBackup, newRestore, type Restore } from '../../../src/api/index.js';
import { createLogger } from '../../../src/base/logger.js';
import type { Kube } from '../../../src/kube/client.js';
import { pvcDataMoverRestoreAction } from '../../../src/server/item-actions/restore-pvc-data-mover.js';
import type { UnstructuredObject } from '../../../src/plugins/item-actions/types.js';
import type { StoredBackupVolumeInfo } from '../../../src/api/volume-info.js';

const fromBackup: UnstructuredObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'app', uid: 'old', annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } },
  spec: { volumeName: 'pvc-1', storageClassName: 'csi-hostpath-sc' },
};
const moved: StoredBackupVolumeInfo = {
  pvcName: 'data',
  pvcNamespace: 'app',
  backupMethod: 'CSISnapshot',
  snapshotDataMoved: true,
  snapshotDataMovementInfo: { snapshotHandle: 'snap-1', dataMover: 'velero', uploaderType: 'kopia' },
};

async function run(volumeInfos: StoredBackupVolumeInfo[], spec: Partial<Restore['spec']> = {}): Promise<UnstructuredObject> {
  // The restorer hands actions the claim already in its target namespace.
  const item = { ...structuredClone(fromBackup), metadata: { ...structuredClone(fromBackup.metadata), namespace: 'copy' } };
  const ctx = { restore: newRestore({ name: 'r', spec: { backupName: 'b', ...spec } }), backup: newBackup({ name: 'b' }), kube: {} as Kube, log: createLogger({ level: 'fatal' }), itemFromBackup: fromBackup, volumeInfos };
  return (await pvcDataMoverRestoreAction.execute(item, ctx)).item;
}

describe('velero.io/csi-pvc-restorer (data-moved claims)', () => {
  it('rewrites a claim the backup moved (matched on its backup-time namespace), with a selector on the restore-time namespace', async () => {
    const out = await run([moved]);
    const spec = out.spec as { volumeName?: string; selector?: { matchLabels: Record<string, string> }; storageClassName: string };
    expect(spec.volumeName).toBeUndefined();
    expect(spec.storageClassName).toBe('csi-hostpath-sc');
    expect(spec.selector?.matchLabels['velero.io/dynamic-pv-restore']).toMatch(/^copy\.data\.[a-z0-9]{5}$/);
    expect(out.metadata.annotations).toBeUndefined();
  });

  it('leaves other claims, claims of fs-backup volumes, and restores with restorePVs=false unchanged', async () => {
    const unchanged = { ...fromBackup, metadata: { ...fromBackup.metadata, namespace: 'copy' } };
    expect(await run([])).toEqual(unchanged);
    expect(await run([{ ...moved, pvcName: 'other' }])).toEqual(unchanged);
    expect(await run([{ pvcName: 'data', pvcNamespace: 'app', backupMethod: 'PodVolumeBackup' }])).toEqual(unchanged);
    expect(await run([moved], { restorePVs: false })).toEqual(unchanged);
  });
});
