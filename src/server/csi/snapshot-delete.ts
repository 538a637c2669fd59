/**
 * Deleting a backup deletes the storage snapshots of the CSI snapshots it kept. For each VolumeSnapshotContent of
 * the backup (from `-csi-volumesnapshotcontents.json.gz`, else from the tarball as Velero 1.14+ stores them),
 * labelled with the backup's name (Velero's rule), a content statically bound to the storage's snapshot handle is
 * made with deletion policy Delete, with a VolumeSnapshot bound to it in the install namespace; once the snapshot
 * is ready the VolumeSnapshot is deleted, and the snapshot controller and the CSI driver delete the content and the
 * storage's snapshot, the way Kubernetes deletes any snapshot. (Velero's own action deletes a lone content instead;
 * a content bound to no VolumeSnapshot carries no finalizer, so the snapshot controller may remove it before the
 * driver is asked to delete anything.) A content whose class asked to keep snapshots (`deletionPolicy: Retain`,
 * recorded when the backup was made) is left in the storage, and the log says so. The temporary objects' names are
 * derived from the backup and the handle, so a deletion run again after a restart reuses them.
 */
import { createHash } from 'node:crypto';
import { Labels, labelValue, type Backup } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { isAlreadyExists } from '../../kube/errors.js';
import { pollUntil } from '../../kube/wait.js';
import { readBackupArchive } from '../archive/reader.js';
import type { BackupStore } from '../../storage/backup-store.js';
import { createVolumeSnapshotContent, createVolumeSnapshotObject, deleteVolumeSnapshotNamed, readVolumeSnapshot, readVolumeSnapshotContent } from './snapshot-api.js';
import { SNAPSHOT_GROUP, VOLUME_SNAPSHOT_CONTENTS, type VolumeSnapshot, type VolumeSnapshotContent } from './snapshot-objects.js';

/** The backup's kept contents: its CSI file, else the contents in its tarball. */
export async function storedContentsOf(store: BackupStore, backupName: string): Promise<VolumeSnapshotContent[]> {
  const stored = await store.getBackupJson(backupName, 'csiVolumeSnapshotContents');
  if (Array.isArray(stored) && stored.length) return stored as VolumeSnapshotContent[];
  let archive;
  try {
    archive = await readBackupArchive(await store.getBackupContents(backupName), { onlyGroupResources: [VOLUME_SNAPSHOT_CONTENTS] });
  } catch {
    return []; // no tarball: nothing of it to delete
  }
  return archive.items.map((i) => i.object as unknown as VolumeSnapshotContent);
}

/** The temporary pair that deletes one storage snapshot: a content bound to the handle and its VolumeSnapshot. */
export function deletingObjectsFor(backup: Backup, vsc: VolumeSnapshotContent, namespace: string): { content: VolumeSnapshotContent; snapshot: VolumeSnapshot } {
  const handle = vsc.status?.snapshotHandle ?? '';
  const id = createHash('sha256').update(`${backup.metadata.uid ?? backup.metadata.name ?? ''}/${handle}`).digest('hex').slice(0, 40);
  const labels = { [Labels.BackupName]: labelValue(backup.metadata.name ?? '') };
  const name = `vsc-delete-${id}`;
  return {
    content: {
      apiVersion: `${SNAPSHOT_GROUP}/v1`,
      kind: 'VolumeSnapshotContent',
      metadata: { name, labels },
      spec: {
        driver: vsc.spec?.driver ?? '',
        deletionPolicy: 'Delete',
        source: { snapshotHandle: handle },
        ...(vsc.spec?.volumeSnapshotClassName ? { volumeSnapshotClassName: vsc.spec.volumeSnapshotClassName } : {}),
        volumeSnapshotRef: { apiVersion: `${SNAPSHOT_GROUP}/v1`, kind: 'VolumeSnapshot', namespace, name },
      },
    },
    snapshot: { apiVersion: `${SNAPSHOT_GROUP}/v1`, kind: 'VolumeSnapshot', metadata: { name, namespace, labels }, spec: { source: { volumeSnapshotContentName: name } } },
  };
}

export interface DeleteKeptSnapshotsOptions {
  kube: Kube;
  /** The install namespace: the temporary VolumeSnapshots are made there. */
  namespace: string;
  backup: Backup;
  store: BackupStore | undefined;
  log: Logger;
  /** How long to wait for the temporary content to be ready and then gone (the backup's resource timeout). */
  timeoutMs: number;
  pollIntervalMs?: number;
}

export async function deleteKeptCsiSnapshots(opts: DeleteKeptSnapshotsOptions): Promise<{ deleted: number; kept: number; errors: string[] }> {
  const out = { deleted: 0, kept: 0, errors: [] as string[] };
  if (!opts.store) return out;
  const name = opts.backup.metadata.name ?? '';
  let contents: VolumeSnapshotContent[];
  try {
    contents = await storedContentsOf(opts.store, name);
  } catch (err) {
    out.errors.push(`error reading the CSI snapshots of backup ${name}: ${(err as Error).message}`);
    return out;
  }
  for (const vsc of contents) {
    const handle = vsc.status?.snapshotHandle;
    // Velero's rule: only contents this backup took (its name label) are deleted.
    if (!handle || vsc.metadata.labels?.[Labels.BackupName] !== labelValue(name)) continue;
    if (vsc.spec?.deletionPolicy === 'Retain') {
      out.kept++;
      opts.log.info({ backup: name, volumeSnapshotContent: vsc.metadata.name, snapshotHandle: handle }, 'CSI snapshot kept in the storage: its VolumeSnapshotClass has deletionPolicy Retain');
      continue;
    }
    try {
      await deleteStorageSnapshot(opts, deletingObjectsFor(opts.backup, vsc, opts.namespace));
      out.deleted++;
      opts.log.info({ backup: name, volumeSnapshotContent: vsc.metadata.name, snapshotHandle: handle }, 'Deleted the storage snapshot of a CSI snapshot');
    } catch (err) {
      out.errors.push(`error deleting CSI snapshot ${handle} (VolumeSnapshotContent ${vsc.metadata.name ?? ''}): ${(err as Error).message}`);
    }
  }
  return out;
}

async function deleteStorageSnapshot(opts: DeleteKeptSnapshotsOptions, objects: ReturnType<typeof deletingObjectsFor>): Promise<void> {
  const name = objects.content.metadata.name ?? '';
  const ignoreExisting = (err: unknown) => {
    if (!isAlreadyExists(err)) throw err;
  };
  await createVolumeSnapshotContent(opts.kube, objects.content).catch(ignoreExisting);
  if (await readVolumeSnapshotContent(opts.kube, name)) {
    await createVolumeSnapshotObject(opts.kube, objects.snapshot).catch(ignoreExisting);
    const intervalMs = opts.pollIntervalMs ?? 1000;
    await pollUntil(
      async () => {
        const vs = await readVolumeSnapshot(opts.kube, opts.namespace, name);
        const ready = vs?.status?.readyToUse === true;
        return { done: ready || !vs, state: vs?.status?.error?.message ?? (ready ? 'ready' : 'not ready') };
      },
      { what: `VolumeSnapshot ${opts.namespace}/${name} bound to the snapshot to delete to be ready`, timeoutMs: opts.timeoutMs, intervalMs },
    );
    await deleteVolumeSnapshotNamed(opts.kube, opts.namespace, name);
    await pollUntil(
      async () => {
        const live = await readVolumeSnapshotContent(opts.kube, name);
        return { done: !live, state: live ? (live.status?.error?.message ?? 'still there') : 'gone' };
      },
      { what: `VolumeSnapshotContent ${name} to be deleted with its storage snapshot`, timeoutMs: opts.timeoutMs, intervalMs },
    );
  }
}
