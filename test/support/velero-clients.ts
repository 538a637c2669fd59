/**
 * Typed clients for cairn's custom resources, one per kind, each reading through src/api's parser as the server does.
 * Tests against a cluster ask for the kinds they touch (`veleroClients(kube).backups`) instead of spelling out the
 * kind, its parser and its type at every use.
 */
import { Kinds, parse, type KindName, type ObjectOf } from '../../src/api/index.js';
import type { Kube } from '../../src/kube/client.js';
import { customClient, type CustomClient } from '../../src/kube/custom.js';

export interface VeleroClients {
  backups: CustomClient<ObjectOf<'Backup'>>;
  restores: CustomClient<ObjectOf<'Restore'>>;
  locations: CustomClient<ObjectOf<'BackupStorageLocation'>>;
  repositories: CustomClient<ObjectOf<'BackupRepository'>>;
  podVolumeBackups: CustomClient<ObjectOf<'PodVolumeBackup'>>;
  podVolumeRestores: CustomClient<ObjectOf<'PodVolumeRestore'>>;
  dataUploads: CustomClient<ObjectOf<'DataUpload'>>;
  dataDownloads: CustomClient<ObjectOf<'DataDownload'>>;
  deleteRequests: CustomClient<ObjectOf<'DeleteBackupRequest'>>;
  downloadRequests: CustomClient<ObjectOf<'DownloadRequest'>>;
}

export function veleroClients(kube: Kube): VeleroClients {
  const client = <K extends KindName>(kind: K): CustomClient<ObjectOf<K>> => customClient<ObjectOf<K>>(kube, Kinds[kind], (o) => parse(kind, o));
  return {
    backups: client('Backup'),
    restores: client('Restore'),
    locations: client('BackupStorageLocation'),
    repositories: client('BackupRepository'),
    podVolumeBackups: client('PodVolumeBackup'),
    podVolumeRestores: client('PodVolumeRestore'),
    dataUploads: client('DataUpload'),
    dataDownloads: client('DataDownload'),
    deleteRequests: client('DeleteBackupRequest'),
    downloadRequests: client('DownloadRequest'),
  };
}
