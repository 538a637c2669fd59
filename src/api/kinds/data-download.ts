/** velero.io/v2alpha1 DataDownload (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { V2Alpha1 } from '../constants.js';
import { defineKind } from '../meta.js';
import { DataPathPhase, DataPathPhases, Duration, StringEnum, StringMap, Timestamp } from '../schema.js';
import { DataPathRunStatusFields, dataPathPrinterColumns } from './data-path-shared.js';
import { NodeOSValues } from './data-upload.js';

export const DataDownloadPhases = DataPathPhases;
export const DataDownloadPhase = DataPathPhase;
export type DataDownloadPhase = DataPathPhase;

export const TargetVolumeSpec = Type.Object({
  pvc: Type.String({ description: 'PVC to restore into.' }),
  pv: Type.String({ description: 'PV to restore into.' }),
  namespace: Type.String({ description: 'Namespace of the PVC.' }),
});
export type TargetVolumeSpec = Static<typeof TargetVolumeSpec>;

export const DataDownloadSpec = Type.Object(
  {
    targetVolume: TargetVolumeSpec,
    backupStorageLocation: Type.String(),
    datamover: Type.Optional(Type.String()),
    snapshotID: Type.String({ description: 'Snapshot in the repository to restore.' }),
    sourceNamespace: Type.String(),
    dataMoverConfig: Type.Optional(StringMap()),
    cancel: Type.Optional(Type.Boolean()),
    operationTimeout: Duration(),
    nodeOS: Type.Optional(StringEnum(NodeOSValues)),
  },
  { description: 'Which snapshot to restore into which volume.' },
);
export type DataDownloadSpec = Static<typeof DataDownloadSpec>;

export const DataDownloadStatus = Type.Object({
  phase: Type.Optional(StringEnum(DataDownloadPhases)),
  ...DataPathRunStatusFields,
  node: Type.Optional(Type.String()),
  acceptedByNode: Type.Optional(Type.String()),
  acceptedTimestamp: Type.Optional(Timestamp()),
});
export type DataDownloadStatus = Static<typeof DataDownloadStatus>;

export const DataDownloadKind = defineKind({
  kind: 'DataDownload',
  version: V2Alpha1,
  description: 'A DataDownload restores the data of one moved snapshot into a volume.',
  spec: DataDownloadSpec,
  status: DataDownloadStatus,
  emptySubresources: true,
  printerColumns: dataPathPrinterColumns('DataDownload', 'Name of the Backup Storage Location where the backup data is stored'),
});
export type DataDownload = Static<typeof DataDownloadKind.schema>;
