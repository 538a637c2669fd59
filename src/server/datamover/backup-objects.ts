/**
 * The objects the server creates for one data-moved PVC (docs/data-mover.md): the source VolumeSnapshot in the
 * PVC's namespace and the DataUpload in the install namespace, labelled so that a re-run of the backup finds them
 * again and the node agent, describe and deletion find them by backup UID. Pure functions.
 */
import { Labels, SnapshotType, controllerReference, labelValue, newDataUpload, type Backup, type DataUpload } from '../../api/index.js';
import { csiSnapshotTimeoutOf, dataUploadOperationId, type ClaimForDataMovement } from './backup-decision.js';
import { generateNameFor, MAX_GENERATE_NAME_BASE } from './generate-name.js';

export const VOLUME_SNAPSHOT_API_VERSION = 'snapshot.storage.k8s.io/v1';
/** The data mover the node agent runs when a backup names none. */
export const DEFAULT_DATA_MOVER = 'velero';

export interface VolumeSnapshotObject {
  apiVersion: string;
  kind: 'VolumeSnapshot';
  metadata: { name?: string; generateName?: string; namespace: string; labels: Record<string, string> };
  spec: { source: { persistentVolumeClaimName: string }; volumeSnapshotClassName: string };
}

/** `velero-<pvc>-`, cut so the generated name keeps its random suffix and stays a valid name. */
export function volumeSnapshotGenerateName(pvcName: string): string {
  const base = `velero-${pvcName}`.slice(0, MAX_GENERATE_NAME_BASE - 1).replace(/[-.]+$/, '');
  return `${base}-`;
}

function backupLabels(backup: Backup): Record<string, string> {
  return { [Labels.BackupName]: labelValue(backup.metadata.name ?? ''), [Labels.BackupUID]: backup.metadata.uid ?? '' };
}

/** The claim's snapshot: the PVC's labels (as Velero copies them) plus the backup's name and UID. */
export function volumeSnapshotFor(opts: { backup: Backup; claim: ClaimForDataMovement; snapshotClass: string }): VolumeSnapshotObject {
  return {
    apiVersion: VOLUME_SNAPSHOT_API_VERSION,
    kind: 'VolumeSnapshot',
    metadata: { generateName: volumeSnapshotGenerateName(opts.claim.name), namespace: opts.claim.namespace, labels: { ...(opts.claim.labels ?? {}), ...backupLabels(opts.backup) } },
    spec: { source: { persistentVolumeClaimName: opts.claim.name }, volumeSnapshotClassName: opts.snapshotClass },
  };
}

export interface DataUploadForOptions {
  backup: Backup;
  claim: ClaimForDataMovement;
  volumeSnapshot: string;
  snapshotClass: string;
  driver: string;
}

export function dataUploadFor(opts: DataUploadForOptions): DataUpload {
  const { backup, claim } = opts;
  const backupName = backup.metadata.name ?? '';
  return newDataUpload({
    namespace: backup.metadata.namespace ?? '',
    generateName: generateNameFor(backupName),
    labels: {
      ...backupLabels(backup),
      [Labels.PVCUID]: claim.uid,
      [Labels.AsyncOperationID]: dataUploadOperationId(backup.metadata.uid ?? '', claim.uid),
    },
    ownerReferences: [controllerReference({ apiVersion: backup.apiVersion ?? 'velero.io/v1', kind: 'Backup', metadata: backup.metadata })],
    spec: {
      snapshotType: SnapshotType.CSI,
      csiSnapshot: { volumeSnapshot: opts.volumeSnapshot, storageClass: claim.storageClassName, snapshotClass: opts.snapshotClass, driver: opts.driver },
      sourcePVC: claim.name,
      sourceNamespace: claim.namespace,
      backupStorageLocation: backup.spec?.storageLocation ?? '',
      datamover: backup.spec?.datamover || DEFAULT_DATA_MOVER,
      // Velero's mapping: the DataUpload's operation timeout is the backup's csiSnapshotTimeout (the node agent's
      // wait for the snapshot); the backup's itemOperationTimeout is the server's to track.
      operationTimeout: csiSnapshotTimeoutOf(backup),
    },
  });
}

/** The operation id of a DataUpload: its label (rebuilt from the backup and PVC UIDs if the label was removed). */
export function operationIdOfDataUpload(du: DataUpload): string {
  const label = du.metadata.labels?.[Labels.AsyncOperationID];
  if (label) return label;
  const backupUid = du.metadata.labels?.[Labels.BackupUID] ?? '';
  const pvcUid = du.metadata.labels?.[Labels.PVCUID] ?? '';
  return backupUid && pvcUid ? dataUploadOperationId(backupUid, pvcUid) : '';
}
