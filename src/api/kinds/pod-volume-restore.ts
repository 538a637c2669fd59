/** velero.io/v1 PodVolumeRestore (docs/api.md), exactly as Velero 1.17's CRD (its fs-backup micro service design). */
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

export const PodVolumeRestorePhases = DataPathPhases;
export const PodVolumeRestorePhase = namedValues(PodVolumeRestorePhases);
export type PodVolumeRestorePhase = (typeof PodVolumeRestorePhases)[number];

export const PodVolumeRestoreSpec = Type.Object(
  {
    pod: ObjectReference,
    volume: Type.String({ description: 'Name of the volume within the restored pod.' }),
    backupStorageLocation: Type.String({ description: 'Storage location holding the backup repository.' }),
    repoIdentifier: Type.String({ description: 'Repository identifier; empty for kopia.' }),
    uploaderType: Type.Optional(StringEnum(UploaderTypes, { description: 'Uploader that moves the data.' })),
    snapshotID: Type.String({ description: 'Snapshot to restore.' }),
    sourceNamespace: Type.String({ description: 'Namespace the volume was backed up from.' }),
    uploaderSettings: Type.Optional(Nullable(StringMap(), { description: 'Settings passed to the uploader.' })),
    cancel: Type.Optional(Type.Boolean({ description: 'Set to true to ask for cancellation.' })),
  },
  { description: 'Which snapshot to restore into which pod volume.' },
);
export type PodVolumeRestoreSpec = Static<typeof PodVolumeRestoreSpec>;

export const PodVolumeRestoreStatus = Type.Object(
  {
    phase: Type.Optional(StringEnum(PodVolumeRestorePhases)),
    message: Type.Optional(Type.String()),
    startTimestamp: Type.Optional(Timestamp()),
    completionTimestamp: Type.Optional(Timestamp()),
    progress: Type.Optional(DataMoveOperationProgress),
    acceptedTimestamp: Type.Optional(Timestamp({ description: 'When a node agent accepted the work.' })),
    node: Type.Optional(Type.String({ description: 'Node where the restore runs.' })),
  },
  { description: 'Progress and outcome of the pod volume restore.' },
);
export type PodVolumeRestoreStatus = Static<typeof PodVolumeRestoreStatus>;

/** The printer columns of Velero 1.17's PVR CRD, in order. */
export const PodVolumeRestorePrinterColumns: readonly PrinterColumn[] = [
  { name: 'Status', type: 'string', jsonPath: '.status.phase', description: 'PodVolumeRestore status such as New/InProgress' },
  { name: 'Started', type: 'date', jsonPath: '.status.startTimestamp', description: 'Time duration since this PodVolumeRestore was started' },
  { name: 'Bytes Done', type: 'integer', format: 'int64', jsonPath: '.status.progress.bytesDone', description: 'Completed bytes' },
  { name: 'Total Bytes', type: 'integer', format: 'int64', jsonPath: '.status.progress.totalBytes', description: 'Total bytes' },
  { name: 'Storage Location', type: 'string', jsonPath: '.spec.backupStorageLocation', description: 'Name of the Backup Storage Location where the backup data is stored' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time duration since this PodVolumeRestore was created' },
  { name: 'Node', type: 'string', jsonPath: '.status.node', description: 'Name of the node where the PodVolumeRestore is processed' },
  { name: 'Uploader Type', type: 'string', jsonPath: '.spec.uploaderType', description: 'The type of the uploader to handle data transfer' },
];

export const PodVolumeRestoreKind = defineKind({
  kind: 'PodVolumeRestore',
  version: V1,
  plural: 'podvolumerestores',
  description: 'A PodVolumeRestore is the file-system restore of one pod volume, done by the node agent.',
  spec: PodVolumeRestoreSpec,
  status: PodVolumeRestoreStatus,
  emptySubresources: true,
  printerColumns: PodVolumeRestorePrinterColumns,
});
export type PodVolumeRestore = Static<typeof PodVolumeRestoreKind.schema>;
