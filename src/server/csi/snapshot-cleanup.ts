/**
 * What happens to a kept CSI snapshot's objects, as Velero does it:
 *   - a snapshot the backup gave up on (never ready, or the backup failed) is removed with the storage's snapshot:
 *     its content's deletion policy is set to Delete, then the VolumeSnapshot is deleted (Velero's
 *     CleanupVolumeSnapshot);
 *   - a snapshot the backup keeps is let go from the cluster once its objects are stored in the backup: the content's
 *     policy is set to Retain and both objects are deleted, so the storage's snapshot stays and belongs to the backup
 *     alone (Velero's DeleteReadyVolumeSnapshot). Deleting the backup deletes it (./snapshot-delete.ts).
 * Every step is idempotent: objects already gone are simply passed over.
 */
import { Labels } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import {
  deleteVolumeSnapshotContent,
  deleteVolumeSnapshotNamed,
  listVolumeSnapshotsWith,
  readVolumeSnapshot,
  setContentDeletionPolicy,
} from './snapshot-api.js';

/** Deletes a VolumeSnapshot and, through its content's policy Delete, the storage's snapshot. */
export async function cleanupCsiSnapshot(opts: { kube: Kube; namespace: string; name: string; log: Logger }): Promise<boolean> {
  const vs = await readVolumeSnapshot(opts.kube, opts.namespace, opts.name);
  if (!vs) return false;
  const vsc = vs.status?.boundVolumeSnapshotContentName;
  if (vsc) await setContentDeletionPolicy(opts.kube, vsc, 'Delete');
  const deleted = await deleteVolumeSnapshotNamed(opts.kube, opts.namespace, opts.name);
  if (deleted) opts.log.info({ volumeSnapshot: `${opts.namespace}/${opts.name}`, ...(vsc ? { volumeSnapshotContent: vsc } : {}) }, 'Deleted the VolumeSnapshot and its storage snapshot');
  return deleted;
}

/** Cleans up every VolumeSnapshot labelled with the backup's UID (a failed backup keeps none of them). */
export async function cleanupCsiSnapshots(opts: { kube: Kube; backupUid: string; log: Logger }): Promise<number> {
  if (!opts.backupUid) return 0;
  let n = 0;
  for (const vs of await listVolumeSnapshotsWith(opts.kube, `${Labels.BackupUID}=${opts.backupUid}`)) {
    const { namespace, name } = vs.metadata;
    if (namespace && name && (await cleanupCsiSnapshot({ kube: opts.kube, namespace, name, log: opts.log }))) n++;
  }
  return n;
}

/**
 * Lets a kept snapshot go from the cluster: content policy Retain, then the content and the VolumeSnapshot deleted.
 * The storage's snapshot stays; the backup holds its handle.
 */
export async function releaseKeptSnapshot(opts: { kube: Kube; namespace: string; name: string; log: Logger }): Promise<void> {
  const vs = await readVolumeSnapshot(opts.kube, opts.namespace, opts.name);
  if (!vs) return;
  const vscName = vs.status?.boundVolumeSnapshotContentName;
  if (vscName && (await setContentDeletionPolicy(opts.kube, vscName, 'Retain'))) await deleteVolumeSnapshotContent(opts.kube, vscName);
  await deleteVolumeSnapshotNamed(opts.kube, opts.namespace, opts.name);
  opts.log.info({ volumeSnapshot: `${opts.namespace}/${opts.name}`, ...(vscName ? { volumeSnapshotContent: vscName } : {}) }, 'Deleted the VolumeSnapshot and its content; the storage snapshot is kept for the backup');
}
