/**
 * The clean-up side of a backup's data movement: canceling DataUploads nobody waits for (timeout, failed backup),
 * deleting the source VolumeSnapshots once the data is moved (their class's deletionPolicy removes the storage's
 * snapshot: the local snapshot is not kept), and, when the backup is deleted, its moved snapshots in the
 * repositories, its DataUploads and any VolumeSnapshot of it still left. Every step is idempotent.
 */
import { Kinds, Labels, parseDataUpload, type Backup, type DataUpload } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { isNotFound } from '../../kube/errors.js';
import { deleteRepositorySnapshots, type SnapshotRef } from '../repository/delete-snapshots.js';
import type { BackupStore } from '../../storage/backup-store.js';
import type { BackupVolumeInfo } from '../../api/volume-info.js';
import { isDataUploadTerminal } from './backup-tracking.js';
import { deleteVolumeSnapshot, listVolumeSnapshotsEverywhere } from './backup-snapshots.js';
import { requestOperationCancel } from '../volume-operation-cancel.js';

const client = (kube: Kube) => customClient<DataUpload>(kube, Kinds.DataUpload, parseDataUpload);

/**
 * The DataUploads of a backup, by name. A cluster whose install predates the DataUpload CRD has none (a 404 on the
 * list), so backups there are tracked exactly as before.
 */
export async function listDataUploads(kube: Kube, namespace: string, backupUid: string): Promise<DataUpload[]> {
  if (!backupUid) return [];
  let found: DataUpload[];
  try {
    found = await client(kube).list(namespace, `${Labels.BackupUID}=${backupUid}`);
  } catch (err) {
    if (isNotFound(err) || isNotFound((err as { cause?: unknown }).cause)) return [];
    throw err;
  }
  return found.sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
}

export interface CancelDataUploadsOptions {
  kube: Kube;
  namespace: string;
  backupUid: string;
  log: Logger;
  /** The status message for a DataUpload asked to cancel. */
  message: (du: DataUpload) => string;
  /** Only these DataUploads (by name); default all of the backup. */
  only?: ReadonlySet<string>;
}

/** `spec.cancel=true` (and a message) on every DataUpload of the backup not already terminal or canceled. */
export async function cancelDataUploads(opts: CancelDataUploadsOptions): Promise<string[]> {
  const dus = client(opts.kube);
  const canceled: string[] = [];
  for (const du of await listDataUploads(opts.kube, opts.namespace, opts.backupUid)) {
    const name = du.metadata.name ?? '';
    if (opts.only && !opts.only.has(name)) continue;
    if (isDataUploadTerminal(du) || du.spec.cancel) continue;
    const message = opts.message(du);
    if (!(await requestOperationCancel(dus, opts.namespace, name, { isTerminal: isDataUploadTerminal, message }))) continue;
    opts.log.warn({ dataUpload: name, phase: du.status?.phase || 'New' }, message);
    canceled.push(name);
  }
  return canceled;
}

/** Deletes the source VolumeSnapshot of each DataUpload (in the PVC's namespace); returns how many were there. */
export async function deleteSourceSnapshots(opts: { kube: Kube; dataUploads: readonly DataUpload[]; log: Logger }): Promise<number> {
  let n = 0;
  for (const du of opts.dataUploads) {
    const name = du.spec.csiSnapshot?.volumeSnapshot;
    if (!name) continue;
    if (await deleteVolumeSnapshot(opts.kube, du.spec.sourceNamespace, name)) {
      n++;
      opts.log.info({ volumeSnapshot: `${du.spec.sourceNamespace}/${name}`, dataUpload: du.metadata.name }, 'Deleted the source VolumeSnapshot of a data upload');
    }
  }
  return n;
}

/** Deletes every VolumeSnapshot labelled with the backup's UID still in the cluster. */
export async function deleteBackupVolumeSnapshots(opts: { kube: Kube; backupUid: string; log: Logger }): Promise<number> {
  if (!opts.backupUid) return 0;
  let n = 0;
  // Not the ones a restore made from the backup (they carry the restore's name).
  for (const vs of await listVolumeSnapshotsEverywhere(opts.kube, `${Labels.BackupUID}=${opts.backupUid},!${Labels.RestoreName}`)) {
    if (vs.metadata.namespace && vs.metadata.name && (await deleteVolumeSnapshot(opts.kube, vs.metadata.namespace, vs.metadata.name))) n++;
  }
  if (n) opts.log.info({ backupUid: opts.backupUid, volumeSnapshots: n }, 'Deleted VolumeSnapshots left by the backup');
  return n;
}

export type MovedSnapshotRef = SnapshotRef;

/** The distinct moved snapshots of a backup: from its DataUploads and from its stored volume info. */
export function movedSnapshotsOf(dus: readonly DataUpload[], volumeInfo: readonly BackupVolumeInfo[]): MovedSnapshotRef[] {
  const seen = new Map<string, MovedSnapshotRef>();
  const add = (ns: string | undefined, id: string | undefined) => {
    if (ns && id) seen.set(`${ns}/${id}`, { volumeNamespace: ns, snapshotID: id });
  };
  for (const du of dus) add(du.spec.sourceNamespace, du.status?.snapshotID);
  for (const v of volumeInfo) if (v.snapshotDataMoved) add(v.pvcNamespace, v.snapshotDataMovementInfo?.snapshotHandle);
  return [...seen.values()];
}

export interface DeleteMovedSnapshotsOptions {
  kube: Kube;
  namespace: string;
  backup: Backup;
  store: BackupStore | undefined;
  log: Logger;
}

/** Deletes a deleted backup's moved snapshots from the repositories of (location, PVC namespace). */
export async function deleteMovedSnapshots(opts: DeleteMovedSnapshotsOptions): Promise<{ deleted: number; errors: string[] }> {
  const name = opts.backup.metadata.name ?? '';
  const errors: string[] = [];
  const inCluster = await listDataUploads(opts.kube, opts.namespace, opts.backup.metadata.uid ?? '');
  let stored: BackupVolumeInfo[] = [];
  if (opts.store) {
    try {
      stored = ((await opts.store.getBackupJson(name, 'volumeInfo')) as BackupVolumeInfo[] | null | undefined) ?? [];
    } catch (err) {
      errors.push(`error reading the volume info of backup ${name}: ${(err as Error).message}`);
    }
  }
  const removed = await deleteRepositorySnapshots({
    kube: opts.kube,
    namespace: opts.namespace,
    backupName: name,
    bslName: opts.backup.spec.storageLocation ?? '',
    snapshots: movedSnapshotsOf(inCluster, stored),
    what: 'moved volume',
    log: opts.log,
  });
  return { deleted: removed.deleted, errors: [...errors, ...removed.errors] };
}

/** Deletes the DataUpload objects of a backup (after its moved snapshots are gone). */
export async function deleteDataUploadObjects(opts: { kube: Kube; namespace: string; backupUid: string }): Promise<number> {
  let n = 0;
  for (const du of await listDataUploads(opts.kube, opts.namespace, opts.backupUid)) {
    if (await client(opts.kube).delete(opts.namespace, du.metadata.name ?? '')) n++;
  }
  return n;
}
