/** velero.io/v1 PodVolumeRestore (docs/api.md), exactly as Velero 1.17's CRD (its fs-backup micro service design). */
import { Type, type Static } from '@sinclair/typebox';
import { defineKind } from '../meta.js';
import { podVolumePrinterColumns, podVolumeSpecFields } from './pod-volume-shared.js';
import { DataPathRunStatusFields } from './data-path-shared.js';
import { DataPathPhase, DataPathPhases, StringEnum, Timestamp } from '../schema.js';

export const PodVolumeRestorePhases = DataPathPhases;
export const PodVolumeRestorePhase = DataPathPhase;
export type PodVolumeRestorePhase = DataPathPhase;

export const PodVolumeRestoreSpec = Type.Object(
  {
    ...podVolumeSpecFields('the restored pod'),
    snapshotID: Type.String({ description: 'Snapshot to restore.' }),
    sourceNamespace: Type.String({ description: 'Namespace the volume was backed up from.' }),
  },
  { description: 'Which snapshot to restore into which pod volume.' },
);
export type PodVolumeRestoreSpec = Static<typeof PodVolumeRestoreSpec>;

export const PodVolumeRestoreStatus = Type.Object(
  {
    phase: Type.Optional(StringEnum(PodVolumeRestorePhases)),
    ...DataPathRunStatusFields,
    acceptedTimestamp: Type.Optional(Timestamp({ description: 'When a node agent accepted the work.' })),
    node: Type.Optional(Type.String({ description: 'Node where the restore runs.' })),
  },
  { description: 'Progress and outcome of the pod volume restore.' },
);
export type PodVolumeRestoreStatus = Static<typeof PodVolumeRestoreStatus>;

/** The printer columns of Velero 1.17's PVR CRD, in order. */
export const PodVolumeRestorePrinterColumns = podVolumePrinterColumns('PodVolumeRestore', {
  location: 'Name of the Backup Storage Location where the backup data is stored',
  uploaderColumn: 'Uploader Type',
});

export const PodVolumeRestoreKind = defineKind({
  kind: 'PodVolumeRestore',
  description: 'A PodVolumeRestore is the file-system restore of one pod volume, done by the node agent.',
  spec: PodVolumeRestoreSpec,
  status: PodVolumeRestoreStatus,
  emptySubresources: true,
  printerColumns: PodVolumeRestorePrinterColumns,
});
export type PodVolumeRestore = Static<typeof PodVolumeRestoreKind.schema>;
