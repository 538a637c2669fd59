/**
 * What Velero 1.17's PodVolumeBackup and PodVolumeRestore CRDs have in common: the spec fields that name the pod
 * volume, the repository and the uploader, and the printer columns (the same eight, worded per kind).
 */
import { Type } from '@sinclair/typebox';
import type { PrinterColumn } from '../meta.js';
import { Nullable, ObjectReference, StringEnum, StringMap, UploaderTypes } from '../schema.js';

/** Spec fields of both kinds; `volumeOf` says whose volume (the backed-up pod's or the restored pod's). */
export function podVolumeSpecFields(volumeOf: string) {
  return {
    pod: ObjectReference,
    volume: Type.String({ description: `Name of the volume within ${volumeOf}.` }),
    backupStorageLocation: Type.String({ description: 'Storage location holding the backup repository.' }),
    repoIdentifier: Type.String({ description: 'Repository identifier; empty for kopia.' }),
    uploaderType: Type.Optional(StringEnum(UploaderTypes, { description: 'Uploader that moves the data.' })),
    uploaderSettings: Type.Optional(Nullable(StringMap(), { description: 'Settings passed to the uploader.' })),
    cancel: Type.Optional(Type.Boolean({ description: 'Set to true to ask for cancellation.' })),
  };
}

/** The printer columns, in Velero's order and words; only the kind's name and two descriptions differ. */
export function podVolumePrinterColumns(kind: 'PodVolumeBackup' | 'PodVolumeRestore', wording: { location: string; uploaderColumn: string }): readonly PrinterColumn[] {
  return [
    { name: 'Status', type: 'string', jsonPath: '.status.phase', description: `${kind} status such as New/InProgress` },
    { name: 'Started', type: 'date', jsonPath: '.status.startTimestamp', description: `Time duration since this ${kind} was started` },
    { name: 'Bytes Done', type: 'integer', format: 'int64', jsonPath: '.status.progress.bytesDone', description: 'Completed bytes' },
    { name: 'Total Bytes', type: 'integer', format: 'int64', jsonPath: '.status.progress.totalBytes', description: 'Total bytes' },
    { name: 'Storage Location', type: 'string', jsonPath: '.spec.backupStorageLocation', description: wording.location },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: `Time duration since this ${kind} was created` },
    { name: 'Node', type: 'string', jsonPath: '.status.node', description: `Name of the node where the ${kind} is processed` },
    { name: wording.uploaderColumn, type: 'string', jsonPath: '.spec.uploaderType', description: 'The type of the uploader to handle data transfer' },
  ];
}
