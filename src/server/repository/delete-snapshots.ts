/**
 * Deletes a deleted backup's snapshots from the backup repositories of (location, volume namespace): the one step
 * pod-volume snapshots and moved (data-mover) snapshots share. A namespace whose repository is gone has nothing left
 * to delete; every other failure is reported and the rest still deleted. Maintenance later reclaims the data.
 */
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { ReadOnlyKopiaRepositoryError, VolumeRepositoryError, openRepositoryForVolume } from '../../storage/volume-repository.js';

export interface SnapshotRef {
  volumeNamespace: string;
  snapshotID: string;
}

export interface DeleteRepositorySnapshotsOptions {
  kube: Kube;
  /** The install namespace. */
  namespace: string;
  backupName: string;
  bslName: string;
  snapshots: readonly SnapshotRef[];
  /** How the snapshots are named in logs and errors: `pod volume`, `moved volume`. */
  what: string;
  log: Logger;
}

export async function deleteRepositorySnapshots(opts: DeleteRepositorySnapshotsOptions): Promise<{ deleted: number; errors: string[] }> {
  const errors: string[] = [];
  const byNamespace = new Map<string, string[]>();
  for (const s of opts.snapshots) byNamespace.set(s.volumeNamespace, [...(byNamespace.get(s.volumeNamespace) ?? []), s.snapshotID]);
  let deleted = 0;
  for (const [volumeNamespace, ids] of byNamespace) {
    let repository;
    try {
      repository = (await openRepositoryForVolume({ kube: opts.kube, namespace: opts.namespace, bslName: opts.bslName, volumeNamespace })).repository;
    } catch (err) {
      if (err instanceof ReadOnlyKopiaRepositoryError) {
        // Velero's snapshots stay in Velero's repository: cairn never writes to it (Velero's own maintenance, if it
        // still runs, or a later deletion by Velero removes them).
        opts.log.info({ backup: opts.backupName, volumeNamespace }, `the namespace's repository is Velero's kopia repository; its ${opts.what} snapshots are left in it`);
        continue;
      }
      if (err instanceof VolumeRepositoryError && /no repository/.test(err.message)) {
        opts.log.info({ backup: opts.backupName, volumeNamespace }, `no backup repository for the namespace; its ${opts.what} snapshots are already gone`);
        continue;
      }
      errors.push(`error opening the backup repository of namespace ${volumeNamespace}: ${(err as Error).message}`);
      continue;
    }
    for (const id of ids) {
      try {
        if (await repository.snapshots.delete(id)) deleted++;
        opts.log.info({ backup: opts.backupName, volumeNamespace, snapshotID: id }, `${opts.what} snapshot deleted`);
      } catch (err) {
        errors.push(`error deleting ${opts.what} snapshot ${id} of namespace ${volumeNamespace}: ${(err as Error).message}`);
      }
    }
  }
  return { deleted, errors };
}
