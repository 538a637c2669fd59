/**
 * velero.io/v1 PodVolumeBackup (docs/api.md), exactly as Velero 1.17's CRD (its fs-backup micro service design): fields, enums and
 * printer columns (including the `Node` column that reads `.status.node`, a field PVB status does not have).
 */
import { Type, type Static } from '@sinclair/typebox';
import { V1 } from '../constants.js';
import { defineKind, type PrinterColumn } from '../meta.js';
import {
  DataMoveOperationProgress,
  DataPathPhases,
  Nullable,
  ObjectReference,
  StringEnum,
  StringMap,
  Timestamp,
  UploaderTypes,
  namedValues,
} from '../schema.js';

export const PodVolumeBackupPhases = DataPathPhases;
export const PodVolumeBackupPhase = namedValues(PodVolumeBackupPhases);
export type PodVolumeBackupPhase = (typeof PodVolumeBackupPhases)[number];

export const PodVolumeBackupSpec = Type.Object(
  {
    node: Type.String({ description: 'Node the workload pod runs on.' }),
    pod: ObjectReference,
    volume: Type.String({ description: 'Name of the volume within the pod.' }),
    backupStorageLocation: Type.String({ description: 'Storage location holding the backup repository.' }),
    repoIdentifier: Type.String({ description: 'Repository identifier; empty for kopia.' }),
    uploaderType: Type.Optional(StringEnum(UploaderTypes, { description: 'Uploader that moves the data.' })),
    tags: Type.Optional(StringMap({ description: 'Tags recorded on the volume snapshot.' })),
    uploaderSettings: Type.Optional(Nullable(StringMap(), { description: 'Settings passed to the uploader.' })),
    cancel: Type.Optional(Type.Boolean({ description: 'Set to true to ask for cancellation.' })),
  },
  { description: 'Which pod volume to back up and where to.' },
);
export type PodVolumeBackupSpec = Static<typeof PodVolumeBackupSpec>;

export const PodVolumeBackupStatus = Type.Object(
  {
    phase: Type.Optional(StringEnum(PodVolumeBackupPhases)),
    path: Type.Optional(Type.String({ description: 'Path of the volume data being backed up.' })),
    snapshotID: Type.Optional(Type.String({ description: 'Snapshot of the volume in the repository.' })),
    message: Type.Optional(Type.String()),
    startTimestamp: Type.Optional(Timestamp()),
    completionTimestamp: Type.Optional(Timestamp()),
    progress: Type.Optional(DataMoveOperationProgress),
    acceptedTimestamp: Type.Optional(Timestamp({ description: 'When a node agent accepted the work.' })),
  },
  { description: 'Progress and outcome of the pod volume backup.' },
);
export type PodVolumeBackupStatus = Static<typeof PodVolumeBackupStatus>;

/** The printer columns of Velero 1.17's PVB CRD, in order. */
export const PodVolumeBackupPrinterColumns: readonly PrinterColumn[] = [
  { name: 'Status', type: 'string', jsonPath: '.status.phase', description: 'PodVolumeBackup status such as New/InProgress' },
  { name: 'Started', type: 'date', jsonPath: '.status.startTimestamp', description: 'Time duration since this PodVolumeBackup was started' },
  { name: 'Bytes Done', type: 'integer', format: 'int64', jsonPath: '.status.progress.bytesDone', description: 'Completed bytes' },
  { name: 'Total Bytes', type: 'integer', format: 'int64', jsonPath: '.status.progress.totalBytes', description: 'Total bytes' },
  { name: 'Storage Location', type: 'string', jsonPath: '.spec.backupStorageLocation', description: 'Name of the Backup Storage Location where this backup should be stored' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time duration since this PodVolumeBackup was created' },
  { name: 'Node', type: 'string', jsonPath: '.status.node', description: 'Name of the node where the PodVolumeBackup is processed' },
  { name: 'Uploader', type: 'string', jsonPath: '.spec.uploaderType', description: 'The type of the uploader to handle data transfer' },
];

export const PodVolumeBackupKind = defineKind({
  kind: 'PodVolumeBackup',
  version: V1,
  plural: 'podvolumebackups',
  description: 'A PodVolumeBackup is the file-system backup of one pod volume, done by the node agent.',
  spec: PodVolumeBackupSpec,
  status: PodVolumeBackupStatus,
  emptySubresources: true,
  printerColumns: PodVolumeBackupPrinterColumns,
});
export type PodVolumeBackup = Static<typeof PodVolumeBackupKind.schema>;
