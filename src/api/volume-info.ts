/**
 * Velero's VolumeInfo files (docs/backup.md): `<backup>-volumeinfo.json.gz` (an array of BackupVolumeInfo)
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
  /**
   * cairn's own (Velero has no such field, and its readers ignore it): why this volume's data was not restored, when
   * the backup of it failed or was canceled. The entry names the volume as the restore would have restored it.
   */
  notRestored?: string;
}

/**
 * A BackupVolumeInfo entry as restore reads it back from a stored file, which any Velero version may have written:
 * only the fields restore decisions read, each of them possibly missing.
 */
export interface StoredBackupVolumeInfo {
  pvName?: string;
  pvcName?: string;
  pvcNamespace?: string;
  backupMethod?: string;
  skipped?: boolean;
  /** With `snapshotDataMovementInfo.snapshotHandle`: the data is restored by a DataDownload. */
  snapshotDataMoved?: boolean;
  snapshotDataMovementInfo?: Partial<SnapshotDataMovementInfo>;
  /** `failed` when the volume's data could not be backed up (a DataUpload Failed or Canceled). */
  result?: string;
  pvInfo?: { reclaimPolicy?: string; labels?: Record<string, string> | null };
}

export function parseVolumeInfos(value: unknown): StoredBackupVolumeInfo[] {
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is StoredBackupVolumeInfo => typeof v === 'object' && v !== null);
}

/** Why resource backup alone leaves a volume's data out (Velero's wording of the same case). */
export const NO_DATA_MOVED_REASON = 'any: no volume backup method selected for the volume (resource backup only);';

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

/**
 * A backup volume info entry with the outcome of the PVB or DataUpload that moved its data: that status's start and
 * completion times and `result` once it has ended, in Velero's key order. What the entry said of these before
 * (and a skipped reason) gives way.
 */
export function withTransferOutcome(
  entry: BackupVolumeInfo,
  status: { startTimestamp?: string | null | undefined; completionTimestamp?: string | null | undefined } | undefined,
  result: VolumeResult | undefined,
): BackupVolumeInfo {
  delete entry.skippedReason;
  delete entry.result;
  delete entry.startTimestamp;
  delete entry.completionTimestamp;
  if (status?.startTimestamp) entry.startTimestamp = status.startTimestamp;
  if (status?.completionTimestamp) entry.completionTimestamp = status.completionTimestamp;
  if (result) entry.result = result;
  return inVeleroOrder(entry);
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
  'notRestored',
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
