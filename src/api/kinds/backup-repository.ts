/** velero.io/v1 BackupRepository (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { AgeColumn, defineKind } from '../meta.js';
import { Duration, Nullable, StringEnum, StringMap, Timestamp, namedValues } from '../schema.js';

export const BackupRepositoryPhases = ['New', 'Ready', 'NotReady'] as const;
export const BackupRepositoryPhase = namedValues(BackupRepositoryPhases);
export type BackupRepositoryPhase = (typeof BackupRepositoryPhases)[number];

/** `spec.repositoryType` (label `velero.io/repository-type` carries the same value). */
export const RepositoryTypes = ['kopia', 'restic', ''] as const;
export type RepositoryType = (typeof RepositoryTypes)[number];

export const BackupRepositoryMaintenanceResults = ['Succeeded', 'Failed'] as const;
export const BackupRepositoryMaintenanceResult = namedValues(BackupRepositoryMaintenanceResults);
export type BackupRepositoryMaintenanceResult = (typeof BackupRepositoryMaintenanceResults)[number];

export const BackupRepositorySpec = Type.Object(
  {
    volumeNamespace: Type.String({ description: 'Workload namespace whose volumes the repository holds.' }),
    backupStorageLocation: Type.String({ description: 'Storage location the repository lives in.' }),
    repositoryType: Type.Optional(StringEnum(RepositoryTypes)),
    resticIdentifier: Type.Optional(Type.String({ description: 'Restic repository URL (restic only).' })),
    maintenanceFrequency: Duration({ description: 'How often to run repository maintenance.' }),
    repositoryConfig: Type.Optional(Nullable(StringMap(), { description: 'Repository settings (cacheLimitMB, ...).' })),
  },
  { description: 'Which repository this is and how to maintain it.' },
);
export type BackupRepositorySpec = Static<typeof BackupRepositorySpec>;

export const BackupRepositoryMaintenanceStatus = Type.Object({
  result: Type.Optional(StringEnum(BackupRepositoryMaintenanceResults)),
  startTimestamp: Type.Optional(Timestamp()),
  completeTimestamp: Type.Optional(Timestamp()),
  message: Type.Optional(Type.String()),
});
export type BackupRepositoryMaintenanceStatus = Static<typeof BackupRepositoryMaintenanceStatus>;

export const BackupRepositoryStatus = Type.Object({
  phase: Type.Optional(StringEnum(BackupRepositoryPhases)),
  message: Type.Optional(Type.String()),
  lastMaintenanceTime: Type.Optional(Timestamp()),
  recentMaintenance: Type.Optional(Type.Array(BackupRepositoryMaintenanceStatus)),
});
export type BackupRepositoryStatus = Static<typeof BackupRepositoryStatus>;

export const BackupRepositoryKind = defineKind({
  kind: 'BackupRepository',
  description: 'A BackupRepository is the deduplicating repository holding one namespace\'s volume data in one storage location.',
  spec: BackupRepositorySpec,
  status: BackupRepositoryStatus,
  emptySubresources: true,
  printerColumns: [AgeColumn, { name: 'Repository Type', type: 'string', jsonPath: '.spec.repositoryType' }],
});
export type BackupRepository = Static<typeof BackupRepositoryKind.schema>;
