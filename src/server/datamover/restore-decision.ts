/**
 * The restore side of CSI snapshot data movement (docs/data-mover.md), as pure decisions: which restored PVCs
 * get their data from a DataDownload (the backup's volume info, matched on the backup-time namespace and name, says
 * `snapshotDataMoved` with a snapshot handle), how such a PVC is rewritten so that only the PV the node agent
 * prepares can bind it, and the operation ID that ties the DataDownload to the restore.
 */
import { randomInt } from 'node:crypto';
import { AsyncOperationIDPrefix, Labels, labelValue, type Restore } from '../../api/index.js';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import type { StoredBackupVolumeInfo } from '../../api/volume-info.js';

/** What a restore needs of one volume whose data the backup moved. */
export interface MovedVolume {
  /** Backup-time claim namespace and name. */
  pvcNamespace: string;
  pvcName: string;
  pvName?: string;
  /** The snapshot in the repository (the DataUpload's `status.snapshotID`). */
  snapshotHandle: string;
  dataMover: string;
  uploaderType: string;
  /** The backup's operation ID (`du-...`). */
  backupOperationID: string;
  /** Bytes the backup moved. */
  size: number;
}

/** The entry of a claim whose data was moved, or undefined (the claim is restored as before). */
export function movedVolumeFor(volumeInfos: readonly StoredBackupVolumeInfo[], pvcNamespace: string, pvcName: string): MovedVolume | undefined {
  const info = volumeInfos.find((v) => v.pvcNamespace === pvcNamespace && v.pvcName === pvcName && v.snapshotDataMoved === true && v.snapshotDataMovementInfo?.snapshotHandle);
  const moved = info?.snapshotDataMovementInfo;
  if (!info || !moved?.snapshotHandle) return undefined;
  return {
    pvcNamespace,
    pvcName,
    ...(info.pvName ? { pvName: info.pvName } : {}),
    snapshotHandle: moved.snapshotHandle,
    dataMover: moved.dataMover || 'velero',
    uploaderType: moved.uploaderType || 'kopia',
    backupOperationID: moved.operationID ?? '',
    size: moved.size ?? 0,
  };
}

/** Velero's CSI PVC restorer leaves claims alone when the restore says not to restore volumes. */
export function dataMovementRestoreAllowed(restore: Restore): boolean {
  return restore.spec.restorePVs !== false;
}

/** `dd-<restore UID>.<backup-time PVC UID>`, cut to a valid label value (it is also the label's value). */
export function dataDownloadOperationId(restoreUid: string, pvcUidFromBackup: string): string {
  return labelValue(`${AsyncOperationIDPrefix.DataDownload}${restoreUid}.${pvcUidFromBackup}`);
}

/** The characters Kubernetes uses for generated name suffixes (no vowels, no look-alikes). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function randomSuffix(length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
  return out;
}

/**
 * The value of `velero.io/dynamic-pv-restore` tying a restored claim to the PV the node agent prepares for it:
 * `<namespace>.<claim>.<5 random characters>`, cut to a valid label value (it starts with the namespace and ends
 * with the suffix or a hash, so it starts and ends alphanumeric).
 */
export function dynamicPvRestoreLabelValue(namespace: string, pvcName: string, suffix: string = randomSuffix()): string {
  return labelValue(`${namespace}.${pvcName}.${suffix}`);
}

/**
 * Annotations of the old binding; kept, they would make the claim look bound. The claim's selected node is not among
 * them: the claim action before this one (restore-pvc.ts) has dropped the old one, and one still there is the node
 * the `velero.io/change-pvc-node-selector` ConfigMap maps it to, kept as in Velero, so the data is moved on that
 * node and the workload scheduled there (a WaitForFirstConsumer class; docs/data-mover.md).
 */
export const DATA_MOVER_PVC_DROPPED_ANNOTATIONS: readonly string[] = [
  'pv.kubernetes.io/bind-completed',
  'pv.kubernetes.io/bound-by-controller',
  'volume.kubernetes.io/storage-provisioner',
  'volume.beta.kubernetes.io/storage-provisioner',
];

/** The selector value of a claim rewritten for a DataDownload, if it is one. */
export function dynamicPvRestoreValueOf(pvc: UnstructuredObject): string | undefined {
  const selector = (pvc.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector;
  return selector?.matchLabels?.[Labels.DynamicPVRestore];
}

/**
 * The claim as it is created for a DataDownload: no volume name, no data source, no binding annotations, and a
 * selector only the PV the node agent re-binds matches (external provisioners refuse claims with a selector, so
 * nothing else is provisioned for it).
 */
export function rewritePvcForDataDownload(pvc: UnstructuredObject, selectorValue: string): UnstructuredObject {
  const out = structuredClone(pvc);
  const spec = { ...((out.spec ?? {}) as Record<string, unknown>) };
  delete spec.volumeName;
  delete spec.dataSource;
  delete spec.dataSourceRef;
  spec.selector = { matchLabels: { [Labels.DynamicPVRestore]: selectorValue } };
  out.spec = spec;
  const ann = out.metadata.annotations;
  if (ann) {
    for (const k of DATA_MOVER_PVC_DROPPED_ANNOTATIONS) delete ann[k];
    if (Object.keys(ann).length === 0) delete out.metadata.annotations;
  }
  return out;
}
