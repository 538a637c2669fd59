/**
 * Builds a backup's volume info file (`<backup>-volumeinfo.json.gz`, shapes in src/api/volume-info.ts) from what the
 * backup sees: PVs and PVCs it only backs up as resources, and the volumes fs-backup or data movement take.
 */
import { NO_DATA_MOVED_REASON, inVeleroOrder, type BackupVolumeInfo } from '../../api/volume-info.js';

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
