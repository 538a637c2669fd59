/**
 * A backup whose files vanished from storage (deleted by Velero, by hand, by a bucket lifecycle rule) leaves the
 * sync with its Backup object and, in the repositories, its pod-volume and moved-volume snapshots. The sync removes
 * the object as Velero does and, first, forgets those snapshots, so their data is reclaimed by the next maintenance
 * instead of being kept forever. The snapshot IDs come from the backup's PodVolumeBackups and DataUploads in the
 * cluster (and from any of its files still in storage).
 *
 * Forgetting is a write to the repositories, so it is held back when it could be a mistake: on a ReadOnly location
 * (nothing is written there), and when every finished backup of the location vanished at once (a wrong bucket or
 * prefix looks just like that; the data stays, and a sync after the fix brings the backups back).
 */
import { BackupStorageLocationAccessMode, type Backup, type BackupStorageLocation } from '../api/index.js';
import type { Logger } from '../base/logger.js';
import type { Kube } from '../kube/client.js';
import { deleteDataUploadObjects, deleteMovedSnapshots } from './datamover/backup-cleanup.js';
import { deletePodVolumeBackupObjects, deletePodVolumeSnapshots } from './podvolume/backup-snapshots.js';
import type { BackupStore } from '../storage/backup-store.js';

export type ForgetDecision = { forget: true } | { forget: false; reason: string };

/** Whether the volume data of this sync pass's orphans may be forgotten (see the module comment). */
export function mayForgetOrphanData(opts: { location: BackupStorageLocation; orphans: number; finishedBackupsOfLocation: number }): ForgetDecision {
  if (opts.location.spec.accessMode === BackupStorageLocationAccessMode.ReadOnly) {
    return { forget: false, reason: 'the location is ReadOnly, so nothing is deleted from its repositories' };
  }
  if (opts.orphans > 1 && opts.orphans >= opts.finishedBackupsOfLocation) {
    return {
      forget: false,
      reason: `all ${opts.orphans} backups of the location vanished from storage at once (a wrong bucket or prefix looks the same), so their volume data is kept`,
    };
  }
  return { forget: true };
}

export interface ForgetOrphanOptions {
  kube: Kube;
  namespace: string;
  backup: Backup;
  store: BackupStore;
  log: Logger;
}

/**
 * Forgets the orphan's snapshots, then deletes its PodVolumeBackups and DataUploads (the IDs go with them, so only
 * after the snapshots are gone). Errors are returned: the caller keeps the Backup object for the next pass.
 */
export async function forgetOrphanVolumeData(opts: ForgetOrphanOptions): Promise<{ snapshots: number; errors: string[] }> {
  const podVolumes = await deletePodVolumeSnapshots(opts);
  const moved = await deleteMovedSnapshots(opts);
  const errors = [...podVolumes.errors, ...moved.errors];
  if (!errors.length) {
    const uid = opts.backup.metadata.uid ?? '';
    await deletePodVolumeBackupObjects({ kube: opts.kube, namespace: opts.namespace, backupUid: uid });
    await deleteDataUploadObjects({ kube: opts.kube, namespace: opts.namespace, backupUid: uid });
  }
  return { snapshots: podVolumes.deleted + moved.deleted, errors };
}
