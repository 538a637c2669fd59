/**
 * The PodVolumeBackups a restore works from: the backup's `<backup>-podvolumebackups.json.gz` in its storage
 * location (there even when the cluster never saw the backup), else the PVBs in the cluster labelled with the
 * backup's name (Velero's only source; backup sync puts them there).
 */
import { Kinds, Labels, labelValue, parsePodVolumeBackup, type PodVolumeBackup } from '../../api/index.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import type { BackupStore } from '../../storage/backup-store.js';

export interface LoadPodVolumeBackupsOptions {
  store: Pick<BackupStore, 'getPodVolumeBackups'>;
  kube: Kube;
  /** The install namespace. */
  namespace: string;
  backupName: string;
}

export async function loadPodVolumeBackups(opts: LoadPodVolumeBackupsOptions): Promise<{ podVolumeBackups: PodVolumeBackup[]; source: 'storage' | 'cluster' }> {
  const stored = await opts.store.getPodVolumeBackups(opts.backupName);
  if (stored.length) return { podVolumeBackups: stored, source: 'storage' };
  const client = customClient<PodVolumeBackup>(opts.kube, Kinds.PodVolumeBackup, parsePodVolumeBackup);
  const inCluster = await client.list(opts.namespace, `${Labels.BackupName}=${labelValue(opts.backupName)}`);
  return { podVolumeBackups: inCluster, source: 'cluster' };
}
