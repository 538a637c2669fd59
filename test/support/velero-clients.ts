/**
 * Typed clients for cairn's custom resources, one per kind, each reading through src/api's parser as the server does.
 * Tests against a cluster ask for the kinds they touch (`veleroClients(kube).backups`) instead of spelling out the
 * kind, its parser and its type at every use.
 */
import {
  Kinds,
  parseBackup,
  parseBackupRepository,
  parseBackupStorageLocation,
  parseDataDownload,
  parseDataUpload,
  parseDeleteBackupRequest,
  parseDownloadRequest,
  parsePodVolumeBackup,
  parsePodVolumeRestore,
  parseRestore,
  type Backup,
  type BackupRepository,
  type BackupStorageLocation,
  type DataDownload,
  type DataUpload,
  type DeleteBackupRequest,
  type DownloadRequest,
  type PodVolumeBackup,
  type PodVolumeRestore,
  type Restore,
} from '../../src/api/index.js';
import type { Kube } from '../../src/kube/client.js';
import { customClient, type CustomClient } from '../../src/kube/custom.js';

export interface VeleroClients {
  backups: CustomClient<Backup>;
  restores: CustomClient<Restore>;
  locations: CustomClient<BackupStorageLocation>;
  repositories: CustomClient<BackupRepository>;
  podVolumeBackups: CustomClient<PodVolumeBackup>;
  podVolumeRestores: CustomClient<PodVolumeRestore>;
  dataUploads: CustomClient<DataUpload>;
  dataDownloads: CustomClient<DataDownload>;
  deleteRequests: CustomClient<DeleteBackupRequest>;
  downloadRequests: CustomClient<DownloadRequest>;
}

export function veleroClients(kube: Kube): VeleroClients {
  return {
    backups: customClient<Backup>(kube, Kinds.Backup, parseBackup),
    restores: customClient<Restore>(kube, Kinds.Restore, parseRestore),
    locations: customClient<BackupStorageLocation>(kube, Kinds.BackupStorageLocation, parseBackupStorageLocation),
    repositories: customClient<BackupRepository>(kube, Kinds.BackupRepository, parseBackupRepository),
    podVolumeBackups: customClient<PodVolumeBackup>(kube, Kinds.PodVolumeBackup, parsePodVolumeBackup),
    podVolumeRestores: customClient<PodVolumeRestore>(kube, Kinds.PodVolumeRestore, parsePodVolumeRestore),
    dataUploads: customClient<DataUpload>(kube, Kinds.DataUpload, parseDataUpload),
    dataDownloads: customClient<DataDownload>(kube, Kinds.DataDownload, parseDataDownload),
    deleteRequests: customClient<DeleteBackupRequest>(kube, Kinds.DeleteBackupRequest, parseDeleteBackupRequest),
    downloadRequests: customClient<DownloadRequest>(kube, Kinds.DownloadRequest, parseDownloadRequest),
  };
}
