/**
 * A restore's DataDownloads as restore item operations (`restore-<name>-itemoperations.json.gz`,
 * docs/restore.md: one per DataDownload, on the claim, action `velero.io/csi-pvc-restorer`, operation ID the DataDownload's
 * `velero.io/async-operation-id`) and as restore volume info (src/api/volume-info.ts: method CSISnapshot, data moved, the snapshot
 * it came from). Pure.
 */
import { DataDownloadPhase, Labels, OperationPhase, type DataDownload, type Restore, type RestoreOperation } from '../../api/index.js';
import { inVeleroRestoreOrder, RestoreMethods, type RestoreVolumeInfo } from '../../api/volume-info.js';
import { dataDownloadError } from './restore-wait.js';
import { restoreTransferOperation } from '../transfer-operations.js';

/** Velero's name of the restore item action that starts data downloads. */
export const DATA_DOWNLOAD_RESTORE_ACTION = 'velero.io/csi-pvc-restorer';

function operationPhase(dd: DataDownload): { phase: OperationPhase; error?: string } {
  const error = dataDownloadError(dd);
  if (error) return { phase: OperationPhase.Failed, error };
  switch (dd.status?.phase) {
    case DataDownloadPhase.Completed:
      return { phase: OperationPhase.Completed };
    case undefined:
    case DataDownloadPhase.New:
      return { phase: OperationPhase.New };
    default:
      return { phase: OperationPhase.InProgress };
  }
}

export function operationIdOf(dd: DataDownload): string {
  return dd.metadata?.labels?.[Labels.AsyncOperationID] ?? '';
}

export function dataDownloadOperations(restore: Restore, dds: readonly DataDownload[]): RestoreOperation[] {
  return dds.map((dd) =>
    restoreTransferOperation(restore, {
      action: DATA_DOWNLOAD_RESTORE_ACTION,
      resource: { Group: '', Resource: 'persistentvolumeclaims', Namespace: dd.spec.targetVolume.namespace, Name: dd.spec.targetVolume.pvc },
      operationID: operationIdOf(dd),
      ...operationPhase(dd),
      status: dd.status,
      description: dd.status?.phase ?? DataDownloadPhase.New,
      created: (dd.metadata as { creationTimestamp?: string } | undefined)?.creationTimestamp,
    }),
  );
}

/** The RestoreVolumeInfo of one DataDownload; `pvName` is the volume the claim is bound to, once known. */
export function restoreVolumeInfoForDataDownload(dd: DataDownload, pvName?: string): RestoreVolumeInfo {
  return inVeleroRestoreOrder({
    pvcName: dd.spec.targetVolume.pvc,
    pvcNamespace: dd.spec.targetVolume.namespace,
    ...(pvName ? { pvName } : {}),
    restoreMethod: RestoreMethods.CSISnapshot,
    snapshotDataMoved: true,
    snapshotDataMovementInfo: {
      dataMover: dd.spec.datamover || 'velero',
      uploaderType: 'kopia',
      snapshotHandle: dd.spec.snapshotID,
      operationID: operationIdOf(dd),
      size: dd.status?.progress?.totalBytes ?? 0,
      Phase: dd.status?.phase ?? DataDownloadPhase.New,
    },
  });
}
