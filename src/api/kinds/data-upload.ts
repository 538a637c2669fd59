/** velero.io/v2alpha1 DataUpload (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { V2Alpha1 } from '../constants.js';
import { defineKind } from '../meta.js';
import { DataPathPhase, DataPathPhases, Duration, Nullable, StringEnum, StringMap, Timestamp, namedValues } from '../schema.js';
import { DataPathRunStatusFields, dataPathPrinterColumns } from './data-path-shared.js';

export const DataUploadPhases = DataPathPhases;
export const DataUploadPhase = DataPathPhase;
export type DataUploadPhase = DataPathPhase;

export const NodeOSValues = ['auto', 'linux', 'windows'] as const;
export const NodeOS = namedValues(NodeOSValues);
export type NodeOS = (typeof NodeOSValues)[number];

/** `spec.snapshotType` values (a plain string in the CRD). */
export const SnapshotType = { CSI: 'CSI' } as const;

export const CSISnapshotSpec = Type.Object({
  volumeSnapshot: Type.String({ description: 'VolumeSnapshot to move the data of.' }),
  storageClass: Type.String({ description: 'Storage class of the source PVC.' }),
  snapshotClass: Type.Optional(Type.String()),
  driver: Type.Optional(Type.String()),
});
export type CSISnapshotSpec = Static<typeof CSISnapshotSpec>;

export const DataUploadSpec = Type.Object(
  {
    snapshotType: Type.String({ description: 'Kind of snapshot to move: "CSI".' }),
    csiSnapshot: Type.Optional(Nullable(CSISnapshotSpec)),
    sourcePVC: Type.String({ description: 'PVC whose snapshot is moved.' }),
    datamover: Type.Optional(Type.String()),
    backupStorageLocation: Type.String(),
    sourceNamespace: Type.String(),
    dataMoverConfig: Type.Optional(Nullable(StringMap())),
    cancel: Type.Optional(Type.Boolean()),
    operationTimeout: Duration({ description: 'How long the data movement may take.' }),
  },
  { description: 'Which snapshot to move to which storage location.' },
);
export type DataUploadSpec = Static<typeof DataUploadSpec>;

export const DataUploadStatus = Type.Object({
  phase: Type.Optional(StringEnum(DataUploadPhases)),
  path: Type.Optional(Type.String()),
  snapshotID: Type.Optional(Type.String()),
  dataMoverResult: Type.Optional(Nullable(StringMap())),
  ...DataPathRunStatusFields,
  node: Type.Optional(Type.String()),
  nodeOS: Type.Optional(StringEnum(NodeOSValues)),
  acceptedByNode: Type.Optional(Type.String()),
  acceptedTimestamp: Type.Optional(Timestamp()),
});
export type DataUploadStatus = Static<typeof DataUploadStatus>;

export const DataUploadKind = defineKind({
  kind: 'DataUpload',
  version: V2Alpha1,
  description: 'A DataUpload moves the data of one volume snapshot into a backup repository.',
  spec: DataUploadSpec,
  status: DataUploadStatus,
  emptySubresources: true,
  printerColumns: dataPathPrinterColumns(
    'DataUpload',
    'Name of the Backup Storage Location where this backup should be stored',
  ),
});
export type DataUpload = Static<typeof DataUploadKind.schema>;
