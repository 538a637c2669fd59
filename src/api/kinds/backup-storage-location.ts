/** velero.io/v1 BackupStorageLocation (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { AgeColumn, defineKind } from '../meta.js';
import { Duration, Formats, Nullable, SecretKeySelector, StringEnum, StringMap, Timestamp, namedValues } from '../schema.js';

export const BackupStorageLocationPhases = ['Available', 'Unavailable'] as const;
export const BackupStorageLocationPhase = namedValues(BackupStorageLocationPhases);
export type BackupStorageLocationPhase = (typeof BackupStorageLocationPhases)[number];

export const BackupStorageLocationAccessModes = ['ReadOnly', 'ReadWrite'] as const;
export const BackupStorageLocationAccessMode = namedValues(BackupStorageLocationAccessModes);
export type BackupStorageLocationAccessMode = (typeof BackupStorageLocationAccessModes)[number];

export const ObjectStorageLocation = Type.Object(
  {
    bucket: Type.String({ description: 'Bucket holding the backups.' }),
    prefix: Type.Optional(Type.String({ description: 'Path inside the bucket under which everything is kept.' })),
    caCert: Type.Optional(
      Type.String({ format: Formats.Byte, description: 'PEM CA bundle (base64) for a TLS endpoint.' }),
    ),
  },
  { description: 'Where in the object store the data lives.' },
);
export type ObjectStorageLocation = Static<typeof ObjectStorageLocation>;

export const BackupStorageLocationSpec = Type.Object(
  {
    provider: Type.String({ description: 'Object store plugin, e.g. "aws" or "filesystem".' }),
    config: Type.Optional(StringMap({ description: 'Provider-specific settings (region, s3Url, ...).' })),
    credential: Type.Optional(SecretKeySelector),
    objectStorage: ObjectStorageLocation,
    default: Type.Optional(Type.Boolean({ description: 'Backups without a storageLocation go here.' })),
    accessMode: Type.Optional(StringEnum(BackupStorageLocationAccessModes)),
    backupSyncPeriod: Type.Optional(Nullable(Duration(), { description: 'How often to sync backups; 0 disables.' })),
    validationFrequency: Type.Optional(
      Nullable(Duration(), { description: 'How often to check the location; 0 disables.' }),
    ),
  },
  { description: 'Where backups are stored and how to reach it.' },
);
export type BackupStorageLocationSpec = Static<typeof BackupStorageLocationSpec>;

export const BackupStorageLocationStatus = Type.Object({
  phase: Type.Optional(StringEnum(BackupStorageLocationPhases)),
  lastSyncedTime: Type.Optional(Timestamp()),
  lastValidationTime: Type.Optional(Timestamp()),
  message: Type.Optional(Type.String()),
  lastSyncedRevision: Type.Optional(Type.String({ description: 'Deprecated; no longer written.' })),
  accessMode: Type.Optional(StringEnum(BackupStorageLocationAccessModes, { description: 'Deprecated.' })),
});
export type BackupStorageLocationStatus = Static<typeof BackupStorageLocationStatus>;

export const BackupStorageLocationKind = defineKind({
  kind: 'BackupStorageLocation',
  shortNames: ['bsl'],
  description: 'A BackupStorageLocation is an object-store bucket (and prefix) where backups are kept.',
  spec: BackupStorageLocationSpec,
  status: BackupStorageLocationStatus,
  emptySubresources: true,
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Backup Storage Location status such as Available/Unavailable' },
    { name: 'Last Validated', type: 'date', jsonPath: '.status.lastValidationTime', description: 'LastValidationTime is the last time the backup store location was validated' },
    AgeColumn,
    { name: 'Default', type: 'boolean', jsonPath: '.spec.default', description: 'Default backup storage location' },
  ],
});
export type BackupStorageLocation = Static<typeof BackupStorageLocationKind.schema>;
