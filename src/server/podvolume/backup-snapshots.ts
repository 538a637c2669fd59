/**
 * Deleting a backup deletes its pod-volume snapshots (docs/storage-locations.md: after native snapshots, before
 * the backup's objects): the snapshot IDs come from the backup's PVBs in the cluster and from its
 * `-podvolumebackups.json.gz`, each from the repository of (location, pod namespace). The repository's maintenance
 * later reclaims the data nothing references any more.
 */
import { Kinds, Labels, parsePodVolumeBackup, type Backup, type PodVolumeBackup } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { deleteRepositorySnapshots, type SnapshotRef } from '../repository/delete-snapshots.js';
import type { BackupStore } from '../../storage/backup-store.js';

export type { SnapshotRef };

/** The distinct snapshots of a backup's PVBs, by pod namespace (PVBs without a snapshot, e.g. empty volumes, have none). */
export function snapshotsOf(pvbs: readonly PodVolumeBackup[]): SnapshotRef[] {
  const seen = new Map<string, SnapshotRef>();
  for (const p of pvbs) {
    const id = p.status?.snapshotID;
    const ns = p.spec.pod.namespace ?? '';
    if (id && ns) seen.set(`${ns}/${id}`, { volumeNamespace: ns, snapshotID: id });
  }
  return [...seen.values()];
}

export interface DeletePodVolumeSnapshotsOptions {
  kube: Kube;
  namespace: string;
  backup: Backup;
  store: BackupStore | undefined;
  log: Logger;
}

export interface DeletePodVolumeSnapshotsResult {
  deleted: number;
  errors: string[];
}

export async function deletePodVolumeSnapshots(opts: DeletePodVolumeSnapshotsOptions): Promise<DeletePodVolumeSnapshotsResult> {
  const name = opts.backup.metadata.name ?? '';
  const uid = opts.backup.metadata.uid ?? '';
  const errors: string[] = [];
  const client = customClient<PodVolumeBackup>(opts.kube, Kinds.PodVolumeBackup, parsePodVolumeBackup);
  const inCluster = uid ? await client.list(opts.namespace, `${Labels.BackupUID}=${uid}`) : [];
  let stored: PodVolumeBackup[] = [];
  if (opts.store) {
    try {
      stored = await opts.store.getPodVolumeBackups(name);
    } catch (err) {
      errors.push(`error reading the pod volume backups of backup ${name}: ${(err as Error).message}`);
    }
  }
  const removed = await deleteRepositorySnapshots({
    kube: opts.kube,
    namespace: opts.namespace,
    backupName: name,
    bslName: opts.backup.spec.storageLocation ?? '',
    snapshots: snapshotsOf([...inCluster, ...stored]),
    what: 'pod volume',
    log: opts.log,
  });
  return { deleted: removed.deleted, errors: [...errors, ...removed.errors] };
}

/** Deletes the PodVolumeBackup objects of a backup (after its snapshots are gone). */
export async function deletePodVolumeBackupObjects(opts: { kube: Kube; namespace: string; backupUid: string }): Promise<number> {
  if (!opts.backupUid) return 0;
  const client = customClient<PodVolumeBackup>(opts.kube, Kinds.PodVolumeBackup, parsePodVolumeBackup);
  let n = 0;
  for (const p of await client.list(opts.namespace, `${Labels.BackupUID}=${opts.backupUid}`)) {
    if (await client.delete(opts.namespace, p.metadata.name ?? '')) n++;
  }
  return n;
}
