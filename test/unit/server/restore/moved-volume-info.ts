import type { StoredBackupVolumeInfo } from '../../../../src/api/volume-info.js';

/**
 * The backup-time volume info entry of claim app/data whose CSI snapshot data was moved (kopia snapshot snap-1,
 * DataUpload operation du-x): what a restore reads to provision the claim through a DataDownload.
 */
export function movedVolumeInfo(o: { pvName: string; size: number; reclaimPolicy: string }): StoredBackupVolumeInfo {
  return {
    pvcName: 'data',
    pvcNamespace: 'app',
    pvName: o.pvName,
    backupMethod: 'CSISnapshot',
    snapshotDataMoved: true,
    snapshotDataMovementInfo: { dataMover: 'velero', uploaderType: 'kopia', snapshotHandle: 'snap-1', operationID: 'du-x', size: o.size, Phase: 'Completed' },
    pvInfo: { reclaimPolicy: o.reclaimPolicy, labels: null },
  };
}
