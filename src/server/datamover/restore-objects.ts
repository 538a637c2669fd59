/**
 * The DataDownload the server creates for one restored claim whose data was moved (docs/data-mover.md): in the
 * install namespace, owned by the Restore, labelled with the restore's name, UID and operation ID so a re-run of the
 * restore finds it again and the wait, describe and clean-up find it by restore UID. Pure.
 */
import { Labels, controllerReference, labelValue, newDataDownload, type DataDownload, type Restore } from '../../api/index.js';
import { dataDownloadOperationId, type MovedVolume } from './restore-decision.js';
import { generateNameFor } from './generate-name.js';

/** Velero's default item operation timeout, used when the Restore has none written yet. */
export const DEFAULT_OPERATION_TIMEOUT = '4h0m0s';

export interface DataDownloadForOptions {
  restore: Restore;
  /** The backup's storage location (where the repository is). */
  backupStorageLocation: string;
  moved: MovedVolume;
  /** The claim as restored: its name and (restore-time, mapped) namespace. */
  targetPvc: { name: string; namespace: string };
  /** The claim's UID in the backup (part of the operation ID). */
  pvcUidFromBackup: string;
}

export function dataDownloadLabels(restore: Restore, pvcUidFromBackup: string): Record<string, string> {
  return {
    [Labels.RestoreName]: labelValue(restore.metadata.name ?? ''),
    [Labels.RestoreUID]: restore.metadata.uid ?? '',
    [Labels.AsyncOperationID]: dataDownloadOperationId(restore.metadata.uid ?? '', pvcUidFromBackup),
  };
}

export function dataDownloadFor(opts: DataDownloadForOptions): DataDownload {
  const { restore, moved } = opts;
  const name = restore.metadata.name ?? 'restore';
  return newDataDownload({
    namespace: restore.metadata.namespace ?? '',
    generateName: generateNameFor(name),
    labels: dataDownloadLabels(restore, opts.pvcUidFromBackup),
    ownerReferences: [controllerReference({ apiVersion: restore.apiVersion ?? 'velero.io/v1', kind: 'Restore', metadata: restore.metadata })],
    spec: {
      targetVolume: { pvc: opts.targetPvc.name, pv: '', namespace: opts.targetPvc.namespace },
      backupStorageLocation: opts.backupStorageLocation,
      snapshotID: moved.snapshotHandle,
      sourceNamespace: moved.pvcNamespace,
      datamover: moved.dataMover,
      operationTimeout: restore.spec.itemOperationTimeout || DEFAULT_OPERATION_TIMEOUT,
    },
  });
}
