/** velero.io/v1 DeleteBackupRequest (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { defineKind } from '../meta.js';
import { Nullable, StringEnum, namedValues } from '../schema.js';

export const DeleteBackupRequestPhases = ['New', 'InProgress', 'Processed'] as const;
export const DeleteBackupRequestPhase = namedValues(DeleteBackupRequestPhases);
export type DeleteBackupRequestPhase = (typeof DeleteBackupRequestPhases)[number];

export const DeleteBackupRequestSpec = Type.Object(
  { backupName: Type.String({ description: 'Backup to delete.' }) },
  { description: 'Which backup to delete.' },
);
export type DeleteBackupRequestSpec = Static<typeof DeleteBackupRequestSpec>;

export const DeleteBackupRequestStatus = Type.Object({
  phase: Type.Optional(StringEnum(DeleteBackupRequestPhases)),
  errors: Type.Optional(Nullable(Type.Array(Type.String()))),
});
export type DeleteBackupRequestStatus = Static<typeof DeleteBackupRequestStatus>;

export const DeleteBackupRequestKind = defineKind({
  kind: 'DeleteBackupRequest',
  description: 'A DeleteBackupRequest asks the server to delete a backup and all of its data.',
  spec: DeleteBackupRequestSpec,
  status: DeleteBackupRequestStatus,
  emptySubresources: true,
  printerColumns: [
    { name: 'BackupName', type: 'string', jsonPath: '.spec.backupName', description: 'The name of the backup to be deleted' },
    { name: 'Status', type: 'string', jsonPath: '.status.phase', description: 'The status of the deletion request' },
  ],
});
export type DeleteBackupRequest = Static<typeof DeleteBackupRequestKind.schema>;
