/**
 * What Velero 1.17's PodVolumeBackup and PodVolumeRestore CRDs have in common: the spec fields that name the pod
 * volume, the repository and the uploader, and the printer columns (the data-path ones plus the uploader's).
 */
import { Type } from '@sinclair/typebox';
import type { PrinterColumn } from '../meta.js';
import { dataPathPrinterColumns } from './data-path-shared.js';
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
    ...dataPathPrinterColumns(kind, wording.location),
    { name: wording.uploaderColumn, type: 'string', jsonPath: '.spec.uploaderType', description: 'The type of the uploader to handle data transfer' },
  ];
}
