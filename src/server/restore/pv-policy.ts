/**
 * What happens to a PersistentVolume from the backup (docs/restore.md), decided from the backup's
 * volume information (`<backup>-volumeinfo.json.gz`): volumes whose data was backed up some other way, and
 * dynamically provisioned volumes that would be deleted with their claim, are provisioned anew (the PVC is
 * restored unbound); volumes kept on release (Retain) are restored as they were, unless one of that name exists.
 */
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import type { StoredBackupVolumeInfo } from '../../api/volume-info.js';

export type PvDecision =
  | { action: 'restore' }
  /** Do not create the PV; its claim is restored without `spec.volumeName` so a new volume is provisioned. */
  | { action: 'provision'; reason: string; warning?: string }
  | { action: 'skip'; reason: string };

/** The parts of a PodVolumeBackup the legacy rule reads (backups without volume information). */
export interface PodVolumeBackupRef {
  metadata?: { annotations?: Record<string, string> };
  spec: { pod: { namespace?: string } };
}

export interface DecidePvOptions {
  pv: UnstructuredObject;
  volumeInfos: readonly StoredBackupVolumeInfo[];
  /** The backup's PodVolumeBackups: for a PV missing from the volume information (backups older than it). */
  podVolumeBackups?: readonly PodVolumeBackupRef[];
  /** Whether a PV of this name exists in the cluster now. */
  exists: boolean;
}

function reclaimPolicy(pv: UnstructuredObject, info?: StoredBackupVolumeInfo): string | undefined {
  const spec = pv.spec as { persistentVolumeReclaimPolicy?: string } | undefined;
  return info?.pvInfo?.reclaimPolicy ?? spec?.persistentVolumeReclaimPolicy;
}

export function decidePv(opts: DecidePvOptions): PvDecision {
  const { pv, volumeInfos, exists } = opts;
  const info = volumeInfos.find((v) => v.pvName === pv.metadata.name);
  switch (info?.backupMethod) {
    case 'PodVolumeBackup':
      return { action: 'provision', reason: 'its data was backed up from the pod (fs-backup) and is restored into a new volume' };
    case 'CSISnapshot':
      if (info.snapshotDataMoved && info.snapshotDataMovementInfo?.snapshotHandle) {
        return { action: 'provision', reason: 'its data was moved to the backup storage and is restored into a new volume by a DataDownload' };
      }
      return { action: 'provision', reason: 'its data was backed up as a CSI snapshot and is restored into a new volume' };
    case 'NativeSnapshot':
      return {
        action: 'provision',
        reason: 'it has a native snapshot',
        warning: `persistent volume ${pv.metadata.name} has a native snapshot, which cairn cannot restore; a new empty volume is provisioned for its claim`,
      };
    default:
      break;
  }
  if (!info && backedUpFromPod(pv, opts.podVolumeBackups ?? [])) {
    return { action: 'provision', reason: 'its data was backed up from the pod (fs-backup) and is restored into a new volume' };
  }
  if (reclaimPolicy(pv, info) === 'Delete') {
    return { action: 'provision', reason: 'its reclaim policy is Delete and it was dynamically provisioned, so a new volume is provisioned for its claim' };
  }
  if (exists) return { action: 'skip', reason: 'a persistent volume of that name exists' };
  return { action: 'restore' };
}

/** Velero's legacy rule: a PVB of a pod in the claim's namespace, annotated with the claim's name. */
function backedUpFromPod(pv: UnstructuredObject, pvbs: readonly PodVolumeBackupRef[]): boolean {
  const claim = (pv.spec as { claimRef?: { namespace?: string; name?: string } } | undefined)?.claimRef;
  if (!claim?.name) return false;
  return pvbs.some((b) => b.spec.pod.namespace === claim.namespace && b.metadata?.annotations?.['velero.io/pvc-name'] === claim.name);
}
