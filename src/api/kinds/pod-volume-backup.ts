/**
 * velero.io/v1 PodVolumeBackup (docs/api.md), exactly as Velero 1.17's CRD (its fs-backup micro service design): fields, enums and
 * printer columns (including the `Node` column that reads `.status.node`, a field PVB status does not have).
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineKind } from '../meta.js';
import { podVolumePrinterColumns, podVolumeSpecFields } from './pod-volume-shared.js';
import { DataPathRunStatusFields } from './data-path-shared.js';
import { DataPathPhase, DataPathPhases, StringEnum, StringMap, Timestamp } from '../schema.js';

export const PodVolumeBackupPhases = DataPathPhases;
export const PodVolumeBackupPhase = DataPathPhase;
export type PodVolumeBackupPhase = DataPathPhase;

export const PodVolumeBackupSpec = Type.Object(
  {
    ...podVolumeSpecFields('the pod'),
    node: Type.String({ description: 'Node the workload pod runs on.' }),
    tags: Type.Optional(StringMap({ description: 'Tags recorded on the volume snapshot.' })),
  },
  { description: 'Which pod volume to back up and where to.' },
);
export type PodVolumeBackupSpec = Static<typeof PodVolumeBackupSpec>;

export const PodVolumeBackupStatus = Type.Object(
  {
    phase: Type.Optional(StringEnum(PodVolumeBackupPhases)),
    path: Type.Optional(Type.String({ description: 'Path of the volume data being backed up.' })),
    snapshotID: Type.Optional(Type.String({ description: 'Snapshot of the volume in the repository.' })),
    ...DataPathRunStatusFields,
    acceptedTimestamp: Type.Optional(Timestamp({ description: 'When a node agent accepted the work.' })),
  },
  { description: 'Progress and outcome of the pod volume backup.' },
);
export type PodVolumeBackupStatus = Static<typeof PodVolumeBackupStatus>;

/** The printer columns of Velero 1.17's PVB CRD, in order. */
export const PodVolumeBackupPrinterColumns = podVolumePrinterColumns('PodVolumeBackup', {
  location: 'Name of the Backup Storage Location where this backup should be stored',
  uploaderColumn: 'Uploader',
});

export const PodVolumeBackupKind = defineKind({
  kind: 'PodVolumeBackup',
  description: 'A PodVolumeBackup is the file-system backup of one pod volume, done by the node agent.',
  spec: PodVolumeBackupSpec,
  status: PodVolumeBackupStatus,
  emptySubresources: true,
  printerColumns: PodVolumeBackupPrinterColumns,
});
export type PodVolumeBackup = Static<typeof PodVolumeBackupKind.schema>;
