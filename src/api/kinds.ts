/** The registry of every velero.io kind cairn knows, keyed by kind name. */
import type { Static } from '@sinclair/typebox';
import { BackupKind } from './kinds/backup.js';
import { BackupRepositoryKind } from './kinds/backup-repository.js';
import { BackupStorageLocationKind } from './kinds/backup-storage-location.js';
import { DataDownloadKind } from './kinds/data-download.js';
import { DataUploadKind } from './kinds/data-upload.js';
import { DeleteBackupRequestKind } from './kinds/delete-backup-request.js';
import { DownloadRequestKind } from './kinds/download-request.js';
import { PodVolumeBackupKind } from './kinds/pod-volume-backup.js';
import { PodVolumeRestoreKind } from './kinds/pod-volume-restore.js';
import { RestoreKind } from './kinds/restore.js';
import { ScheduleKind } from './kinds/schedule.js';
import { ServerStatusRequestKind } from './kinds/server-status-request.js';
import { VolumeSnapshotLocationKind } from './kinds/volume-snapshot-location.js';
import type { KindDefinition } from './meta.js';

/** Every kind, in the order Velero's installer lists its CRDs (v1 alphabetical, then v2alpha1). */
export const Kinds = {
  BackupRepository: BackupRepositoryKind,
  Backup: BackupKind,
  BackupStorageLocation: BackupStorageLocationKind,
  DeleteBackupRequest: DeleteBackupRequestKind,
  DownloadRequest: DownloadRequestKind,
  PodVolumeBackup: PodVolumeBackupKind,
  PodVolumeRestore: PodVolumeRestoreKind,
  Restore: RestoreKind,
  Schedule: ScheduleKind,
  ServerStatusRequest: ServerStatusRequestKind,
  VolumeSnapshotLocation: VolumeSnapshotLocationKind,
  DataDownload: DataDownloadKind,
  DataUpload: DataUploadKind,
} as const;

export type KindName = keyof typeof Kinds;
export const KindNames = Object.keys(Kinds) as KindName[];

/** The TypeScript type of a whole object of kind K, e.g. ObjectOf<'Backup'> is Backup. */
export type ObjectOf<K extends KindName> = Static<(typeof Kinds)[K]['schema']>;
export type SpecOf<K extends KindName> = Static<(typeof Kinds)[K]['spec']>;
export type StatusOf<K extends KindName> = Static<(typeof Kinds)[K]['status']>;

/** Any velero.io object cairn knows. */
export type VeleroObject = { [K in KindName]: ObjectOf<K> }[KindName];

export function kindDefinition<K extends KindName>(kind: K): (typeof Kinds)[K] {
  return Kinds[kind];
}

export function isKindName(value: string): value is KindName {
  return Object.hasOwn(Kinds, value);
}

export const allKindDefinitions: readonly KindDefinition[] = Object.values(Kinds);
