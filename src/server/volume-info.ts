/**
 * Velero's VolumeInfo files (velero-interfaces.md §7): `<backup>-volumeinfo.json.gz` (an array of BackupVolumeInfo)
 * and `restores/<r>/<r>-volumeinfo.json.gz` (RestoreVolumeInfo). Field names and which fields are always present
 * follow Velero's JSON exactly, including the capitalised `Phase`/`ReadyToUse` keys that have no JSON tag there.
 *
 * Resource backup moves no volume data: every PV it sees is recorded as skipped with the reason. fs-backup replaces
 * those entries with PodVolumeBackup ones.
 */

export const BackupMethods = { NativeSnapshot: 'NativeSnapshot', PodVolumeBackup: 'PodVolumeBackup', CSISnapshot: 'CSISnapshot' } as const;
export type BackupMethod = (typeof BackupMethods)[keyof typeof BackupMethods];
export const RestoreMethods = { NativeSnapshot: 'NativeSnapshot', PodVolumeRestore: 'PodVolumeRestore', CSISnapshot: 'CSISnapshot' } as const;
export type RestoreMethod = (typeof RestoreMethods)[keyof typeof RestoreMethods];
export type VolumeResult = 'succeeded' | 'failed';
/** Approaches named in `skippedReason` (`<approach>: <reason>;`). */
export type SkipApproach = 'podvolume' | 'csiSnapshot' | 'volumeSnapshot' | 'vsphereSnapshot' | 'any';

export interface CSISnapshotInfo {
  snapshotHandle: string;
  size: number;
  driver: string;
  vscName: string;
  operationID?: string;
  ReadyToUse: boolean | null;
}

export interface SnapshotDataMovementInfo {
  dataMover: string;
  uploaderType: string;
  retainedSnapshot?: string;
  snapshotHandle: string;
  operationID: string;
  size: number;
  Phase: string;
}

export interface NativeSnapshotInfo {
  snapshotHandle: string;
  volumeType: string;
  volumeAZ: string;
  iops: string;
  Phase: string;
}

export interface PodVolumeInfo {
  snapshotHandle?: string;
  size?: number;
  uploaderType: string;
  volumeName: string;
  podName: string;
  podNamespace: string;
  nodeName?: string;
  Phase: string;
}

export interface PVInfo {
  reclaimPolicy: string;
  labels: Record<string, string> | null;
}

export interface BackupVolumeInfo {
  pvcName?: string;
  pvcNamespace?: string;
  pvName?: string;
  backupMethod?: BackupMethod;
  snapshotDataMoved: boolean;
  preserveLocalSnapshot: boolean;
  skipped: boolean;
  skippedReason?: string;
  startTimestamp?: string;
  completionTimestamp?: string;
  result?: VolumeResult;
  csiSnapshotInfo?: CSISnapshotInfo;
  snapshotDataMovementInfo?: SnapshotDataMovementInfo;
  nativeSnapshotInfo?: NativeSnapshotInfo;
  pvbInfo?: PodVolumeInfo;
  pvInfo?: PVInfo;
}

export interface RestoreVolumeInfo {
  pvcName?: string;
  pvcNamespace?: string;
  pvName?: string;
  restoreMethod?: RestoreMethod;
  snapshotDataMoved: boolean;
  csiSnapshotInfo?: CSISnapshotInfo;
  snapshotDataMovementInfo?: SnapshotDataMovementInfo;
  nativeSnapshotInfo?: NativeSnapshotInfo;
  pvrInfo?: PodVolumeInfo;
}

/** Why resource backup alone leaves a volume's data out (Velero's wording of the same case). */
export const NO_DATA_MOVED_REASON = 'any: no volume backup method selected for the volume (resource backup only);';

/** A minimal view of a PV as the backup reads it. */
export interface PersistentVolumeLike {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { persistentVolumeReclaimPolicy?: string; claimRef?: { name?: string; namespace?: string } };
}

/** A minimal view of a PVC as the backup reads it. */
export interface PersistentVolumeClaimLike {
  metadata: { name: string; namespace?: string };
  spec?: { volumeName?: string };
}

/**
 * Collects one BackupVolumeInfo per PV seen in a backup. PVs are keyed by name, so a PV seen through its PVC and
 * again on its own is recorded once.
 */
export class BackupVolumeInfoCollector {
  private readonly byPv = new Map<string, BackupVolumeInfo>();
  /** fs-backup entries of volumes without a PV (emptyDir...). */
  private readonly podVolumes: BackupVolumeInfo[] = [];

  /** Records a PV whose data this backup does not move (merged with its claim's entry when there is one). */
  addSkippedPv(pv: PersistentVolumeLike, reason: string = NO_DATA_MOVED_REASON): void {
    const claim = pv.spec?.claimRef;
    const entry = this.skippedEntry(pv.metadata.name, reason);
    if (claim?.name && !entry.pvcName) entry.pvcName = claim.name;
    if (claim?.namespace && !entry.pvcNamespace) entry.pvcNamespace = claim.namespace;
    entry.pvInfo = { reclaimPolicy: pv.spec?.persistentVolumeReclaimPolicy ?? '', labels: pv.metadata.labels ?? null };
  }

  /**
   * Records the volume of a bound PVC whose data this backup does not move, so the claim is listed even when its
   * PV is not in the backup (cluster resources excluded). Unbound claims have no volume to record.
   */
  addSkippedPvc(pvc: PersistentVolumeClaimLike, reason: string = NO_DATA_MOVED_REASON): void {
    const pvName = pvc.spec?.volumeName;
    if (!pvName) return;
    const entry = this.skippedEntry(pvName, reason);
    entry.pvcName = pvc.metadata.name;
    if (pvc.metadata.namespace) entry.pvcNamespace = pvc.metadata.namespace;
  }

  private skippedEntry(pvName: string, reason: string): BackupVolumeInfo {
    let entry = this.byPv.get(pvName);
    if (!entry) {
      entry = { pvName, snapshotDataMoved: false, preserveLocalSnapshot: false, skipped: true, skippedReason: reason };
      this.byPv.set(pvName, entry);
    }
    return entry;
  }

  /**
   * Records a pod volume fs-backup takes: a PVC volume replaces its PV's skipped entry (keeping the PV's pvInfo),
   * a volume without PV (emptyDir) gets its own entry.
   */
  addPodVolume(info: BackupVolumeInfo): void {
    if (!info.pvName) {
      this.podVolumes.push(info);
      return;
    }
    const prev = this.byPv.get(info.pvName);
    const pvInfo = info.pvInfo ?? prev?.pvInfo;
    this.byPv.set(info.pvName, { ...info, ...(pvInfo ? { pvInfo } : {}) });
  }

  /** Says why fs-backup skipped a PV's volume (`podvolume: <reason>;`), unless another method took it. */
  addPodVolumeSkip(pvName: string, reason: string): void {
    const entry = this.skippedEntry(pvName, '');
    if (entry.skipped) entry.skippedReason = `podvolume: ${reason};`;
  }

  /**
   * Records a PV whose data CSI snapshot data movement takes (a DataUpload), replacing its skipped entry and
   * keeping the PV's pvInfo.
   */
  addDataMovement(info: BackupVolumeInfo): void {
    this.addPodVolume(info);
  }

  /**
   * Says why snapshot data movement did not take a PV's volume (`csiSnapshot: <reason>;`), unless another method
   * took it. It replaces the generic "resource backup only" reason and follows a fs-backup one.
   */
  addCsiSnapshotSkip(pvName: string, reason: string): void {
    const entry = this.skippedEntry(pvName, reason);
    if (!entry.skipped || entry.skippedReason === reason || entry.skippedReason?.includes(reason)) return;
    entry.skippedReason = !entry.skippedReason || entry.skippedReason === NO_DATA_MOVED_REASON ? reason : `${entry.skippedReason} ${reason}`;
  }

  /** Replaces (or adds) the entry of a PV, e.g. once fs-backup has moved its data. */
  set(pvName: string, info: BackupVolumeInfo): void {
    this.byPv.set(pvName, info);
  }

  /** Entries sorted by PVC namespace/name then PV name, keys in Velero's field order, so the file is stable. */
  toJSON(): BackupVolumeInfo[] {
    const key = (v: BackupVolumeInfo) => `${v.pvcNamespace ?? ''}/${v.pvcName ?? ''}/${v.pvName ?? ''}`;
    const byPv = [...this.byPv.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    return [...byPv, ...this.podVolumes].map(inVeleroOrder);
  }
}

const BACKUP_VOLUME_INFO_KEYS: readonly (keyof BackupVolumeInfo)[] = [
  'pvcName',
  'pvcNamespace',
  'pvName',
  'backupMethod',
  'snapshotDataMoved',
  'preserveLocalSnapshot',
  'skipped',
  'skippedReason',
  'startTimestamp',
  'completionTimestamp',
  'result',
  'csiSnapshotInfo',
  'snapshotDataMovementInfo',
  'nativeSnapshotInfo',
  'pvbInfo',
  'pvInfo',
];

/** The entry with its keys in the order Velero's struct declares them (what Go's encoder writes). */
export function inVeleroOrder(v: BackupVolumeInfo): BackupVolumeInfo {
  const out: Record<string, unknown> = {};
  for (const k of BACKUP_VOLUME_INFO_KEYS) if (v[k] !== undefined) out[k] = v[k];
  return out as unknown as BackupVolumeInfo;
}

const RESTORE_VOLUME_INFO_KEYS: readonly (keyof RestoreVolumeInfo)[] = [
  'pvcName',
  'pvcNamespace',
  'pvName',
  'restoreMethod',
  'snapshotDataMoved',
  'csiSnapshotInfo',
  'snapshotDataMovementInfo',
  'nativeSnapshotInfo',
  'pvrInfo',
];

const POD_VOLUME_INFO_KEYS: readonly (keyof PodVolumeInfo)[] = ['snapshotHandle', 'size', 'uploaderType', 'volumeName', 'podName', 'podNamespace', 'nodeName', 'Phase'];

/** A restore entry with its keys in Velero's struct order. */
export function inVeleroRestoreOrder(v: RestoreVolumeInfo): RestoreVolumeInfo {
  const out: Record<string, unknown> = {};
  for (const k of RESTORE_VOLUME_INFO_KEYS) {
    if (v[k] === undefined) continue;
    if (k === 'pvrInfo' && v.pvrInfo) {
      const info: Record<string, unknown> = {};
      for (const p of POD_VOLUME_INFO_KEYS) if (v.pvrInfo[p] !== undefined) info[p] = v.pvrInfo[p];
      out[k] = info;
    } else {
      out[k] = v[k];
    }
  }
  return out as unknown as RestoreVolumeInfo;
}

/** A minimal view of a PodVolumeRestore as restore volume info reads it. */
export interface PodVolumeRestoreLike {
  spec: { pod: { name?: string; namespace?: string }; volume: string; snapshotID: string; uploaderType?: string };
  status?: { progress?: { totalBytes?: number } };
}

/**
 * The RestoreVolumeInfo of one PodVolumeRestore (Velero's tracker: method PodVolumeRestore, `pvrInfo` with the
 * snapshot, restored size and the restored pod; `Phase` and `nodeName` stay empty for restores). `pvcName` is the
 * claim behind the pod volume, when it is a PVC volume.
 */
export function restoreVolumeInfoForPodVolumeRestore(pvr: PodVolumeRestoreLike, pvcName?: string): RestoreVolumeInfo {
  const size = pvr.status?.progress?.totalBytes;
  const info: RestoreVolumeInfo = {
    restoreMethod: RestoreMethods.PodVolumeRestore,
    snapshotDataMoved: false,
    pvrInfo: {
      snapshotHandle: pvr.spec.snapshotID,
      ...(size ? { size } : {}),
      uploaderType: pvr.spec.uploaderType || 'kopia',
      volumeName: pvr.spec.volume,
      podName: pvr.spec.pod.name ?? '',
      podNamespace: pvr.spec.pod.namespace ?? '',
      Phase: '',
    },
  };
  if (pvcName) {
    info.pvcName = pvcName;
    info.pvcNamespace = pvr.spec.pod.namespace ?? '';
  }
  return inVeleroRestoreOrder(info);
}
