/**
 * Which volumes of a restored pod get their data back from fs-backup (docs/fs-backup.md,
 * `getVolumeBackupInfoForPod`): the backup's PodVolumeBackups of the pod as it was at backup time (matched by its
 * original namespace and name, so namespace mapping changes nothing here), minus PVBs without a snapshot (empty
 * volumes), PVBs that did not complete, and volumes the restored pod fills itself (projected, downwardAPI) or no
 * longer declares. The PVBs' own `backupStorageLocation` is not used: it names the location in the cluster that made
 * the backup; the data is read through the location the backup is in here (the restore's backup's
 * `spec.storageLocation`, which sync sets to the local location), as Velero does.
 */
import { PodVolumeBackupPhase, type PodVolumeBackup } from '../../api/index.js';

/** The parts of a pod volume this decision reads. */
export interface PodVolumeSource {
  name: string;
  projected?: unknown;
  downwardAPI?: unknown;
  persistentVolumeClaim?: { claimName?: string };
}

/** What the restore needs to bring one volume back. */
export interface VolumeToRestore {
  volume: string;
  snapshotID: string;
  uploaderType: string;
  /** The claim behind the volume, when it is a PVC volume of the restored pod. */
  claimName?: string;
  /** Bytes the backup moved (PVB progress), for volume info. */
  totalBytes?: number;
}

export interface VolumesToRestoreOptions {
  podVolumeBackups: readonly PodVolumeBackup[];
  /** The pod's name (unchanged by a restore). */
  podName: string;
  /** The pod's namespace at backup time (before namespace mapping). */
  sourceNamespace: string;
  /** The volumes the restored pod declares. */
  podVolumes: readonly PodVolumeSource[];
}

const NOT_RESTORABLE_PHASES: ReadonlySet<string> = new Set([PodVolumeBackupPhase.Failed, PodVolumeBackupPhase.Canceled]);

function hasNonRestorableSource(v: PodVolumeSource): boolean {
  return v.projected !== undefined || v.downwardAPI !== undefined;
}

/** The volumes to restore, sorted by name (one per volume even if several PVBs name it: the last completed wins). */
export function volumesToRestore(opts: VolumesToRestoreOptions): VolumeToRestore[] {
  const declared = new Map(opts.podVolumes.map((v) => [v.name, v] as const));
  const byVolume = new Map<string, VolumeToRestore>();
  for (const pvb of opts.podVolumeBackups) {
    const pod = pvb.spec.pod;
    if (pod.name !== opts.podName || pod.namespace !== opts.sourceNamespace) continue;
    const snapshotID = pvb.status?.snapshotID ?? '';
    if (!snapshotID) continue;
    if (NOT_RESTORABLE_PHASES.has(pvb.status?.phase ?? '')) continue;
    const source = declared.get(pvb.spec.volume);
    if (!source || hasNonRestorableSource(source)) continue;
    const entry: VolumeToRestore = {
      volume: pvb.spec.volume,
      snapshotID,
      uploaderType: pvb.spec.uploaderType || 'kopia',
    };
    const claim = source.persistentVolumeClaim?.claimName;
    if (claim) entry.claimName = claim;
    const total = pvb.status?.progress?.totalBytes;
    if (typeof total === 'number') entry.totalBytes = total;
    byVolume.set(entry.volume, entry);
  }
  return [...byVolume.values()].sort((a, b) => a.volume.localeCompare(b.volume));
}

/** The pod's volumes as declared in its spec (an unstructured pod from the archive or the API). */
export function podVolumesOf(pod: object): PodVolumeSource[] {
  const vols = ((pod as { spec?: unknown }).spec as { volumes?: unknown } | undefined)?.volumes;
  return Array.isArray(vols) ? vols.filter((v): v is PodVolumeSource => typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string') : [];
}
