/**
 * What Velero's four data-path kinds (PodVolumeBackup, PodVolumeRestore, DataUpload, DataDownload) have in common:
 * the status fields that report how a run went and the printer columns that show it.
 */
import { Type } from '@sinclair/typebox';
import type { PrinterColumn } from '../meta.js';
import { DataMoveOperationProgress, Timestamp } from '../schema.js';

/** Status fields every data-path CR has: what went wrong, when it started and ended, how many bytes are done. */
export const DataPathRunStatusFields = {
  message: Type.Optional(Type.String()),
  startTimestamp: Type.Optional(Timestamp()),
  completionTimestamp: Type.Optional(Timestamp()),
  progress: Type.Optional(DataMoveOperationProgress),
};

/** The printer columns, in Velero's order and words; only the kind's name and the storage location's wording differ. */
export function dataPathPrinterColumns(kind: string, storageLocationDescription: string): PrinterColumn[] {
  return [
    { name: 'Status', type: 'string', jsonPath: '.status.phase', description: `${kind} status such as New/InProgress` },
    { name: 'Started', type: 'date', jsonPath: '.status.startTimestamp', description: `Time duration since this ${kind} was started` },
    { name: 'Bytes Done', type: 'integer', format: 'int64', jsonPath: '.status.progress.bytesDone', description: 'Completed bytes' },
    { name: 'Total Bytes', type: 'integer', format: 'int64', jsonPath: '.status.progress.totalBytes', description: 'Total bytes' },
    { name: 'Storage Location', type: 'string', jsonPath: '.spec.backupStorageLocation', description: storageLocationDescription },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: `Time duration since this ${kind} was created` },
    { name: 'Node', type: 'string', jsonPath: '.status.node', description: `Name of the node where the ${kind} is processed` },
  ];
}
