/** velero.io/v1 DownloadRequest (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { defineKind } from '../meta.js';
import { StringEnum, Timestamp, namedValues } from '../schema.js';

export const DownloadRequestPhases = ['New', 'Processed'] as const;
export const DownloadRequestPhase = namedValues(DownloadRequestPhases);
export type DownloadRequestPhase = (typeof DownloadRequestPhases)[number];

export const DownloadTargetKinds = [
  'BackupLog',
  'BackupContents',
  'BackupVolumeSnapshots',
  'BackupItemOperations',
  'BackupResourceList',
  'BackupResults',
  'RestoreLog',
  'RestoreResults',
  'RestoreResourceList',
  'RestoreItemOperations',
  'CSIBackupVolumeSnapshots',
  'CSIBackupVolumeSnapshotContents',
  'BackupVolumeInfos',
  'RestoreVolumeInfo',
] as const;
export const DownloadTargetKind = namedValues(DownloadTargetKinds);
export type DownloadTargetKind = (typeof DownloadTargetKinds)[number];

export const DownloadTarget = Type.Object({
  kind: StringEnum(DownloadTargetKinds, { description: 'Which file of the backup or restore.' }),
  name: Type.String({ description: 'Name of the backup or restore.' }),
});
export type DownloadTarget = Static<typeof DownloadTarget>;

export const DownloadRequestSpec = Type.Object(
  { target: DownloadTarget },
  { description: 'Which file to make downloadable.' },
);
export type DownloadRequestSpec = Static<typeof DownloadRequestSpec>;

export const DownloadRequestStatus = Type.Object({
  phase: Type.Optional(StringEnum(DownloadRequestPhases)),
  downloadURL: Type.Optional(Type.String({ description: 'Pre-signed URL of the file.' })),
  expiration: Type.Optional(Timestamp({ description: 'When the URL (and this request) expires.' })),
});
export type DownloadRequestStatus = Static<typeof DownloadRequestStatus>;

export const DownloadRequestKind = defineKind({
  kind: 'DownloadRequest',
  description: 'A DownloadRequest asks the server for a short-lived URL to a file of a backup or restore.',
  spec: DownloadRequestSpec,
  status: DownloadRequestStatus,
});
export type DownloadRequest = Static<typeof DownloadRequestKind.schema>;
