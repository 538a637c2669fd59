/** velero.io/v1 Backup (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { defineKind } from '../meta.js';
import { Duration, LabelSelector, Nullable, NullableStrings, StringEnum, StringMap, Timestamp, TypedLocalObjectReference, namedValues } from '../schema.js';

export const BackupPhases = [
  'New',
  'FailedValidation',
  'InProgress',
  'WaitingForPluginOperations',
  'WaitingForPluginOperationsPartiallyFailed',
  'Finalizing',
  'FinalizingPartiallyFailed',
  'Completed',
  'PartiallyFailed',
  'Failed',
  'Deleting',
  // cairn's own (Velero has no cancel): a canceled backup ends Canceling → Canceled (docs/backup.md).
  'Canceling',
  'Canceled',
] as const;
export const BackupPhase = namedValues(BackupPhases);
export type BackupPhase = (typeof BackupPhases)[number];

/** Phases a backup never leaves by itself (only deletion follows). */
export const BackupTerminalPhases: readonly BackupPhase[] = ['Completed', 'PartiallyFailed', 'Failed', 'FailedValidation', 'Canceled'];
/** Phases of a backup still being made, from New to its last finalizing step: it is neither done nor deleted. */
export const BackupRunningPhases: readonly BackupPhase[] = [
  'New',
  'InProgress',
  'WaitingForPluginOperations',
  'WaitingForPluginOperationsPartiallyFailed',
  'Finalizing',
  'FinalizingPartiallyFailed',
];
export function isBackupDone(phase: string | undefined): boolean {
  return (BackupTerminalPhases as readonly string[]).includes(phase ?? '');
}

export const HookErrorModes = ['Continue', 'Fail'] as const;
export const HookErrorMode = namedValues(HookErrorModes);
export type HookErrorMode = (typeof HookErrorModes)[number];

export const ExecHook = Type.Object({
  container: Type.Optional(Type.String({ description: 'Container to run the command in; default: the first.' })),
  command: Type.Array(Type.String(), { minItems: 1, description: 'Command and arguments to execute.' }),
  onError: Type.Optional(StringEnum(HookErrorModes, { description: 'What a failing hook does to the backup.' })),
  timeout: Type.Optional(Duration({ description: 'How long to wait for the command before failing it.' })),
});
export type ExecHook = Static<typeof ExecHook>;

export const BackupResourceHook = Type.Object({
  exec: ExecHook,
});
export type BackupResourceHook = Static<typeof BackupResourceHook>;

/** Which pods a hook set applies to: the same fields in Backup's and Restore's hook specs. */
export const HookSelectionFields = {
  includedNamespaces: NullableStrings(),
  excludedNamespaces: NullableStrings(),
  includedResources: NullableStrings(),
  excludedResources: NullableStrings(),
  labelSelector: Type.Optional(Nullable(LabelSelector)),
};

export const BackupResourceHookSpec = Type.Object({
  name: Type.String({ description: 'Name of this hook set.' }),
  ...HookSelectionFields,
  pre: Type.Optional(Type.Array(BackupResourceHook, { description: 'Hooks run before the pod is backed up.' })),
  post: Type.Optional(Type.Array(BackupResourceHook, { description: 'Hooks run after the pod is backed up.' })),
});
export type BackupResourceHookSpec = Static<typeof BackupResourceHookSpec>;

export const BackupSpec = Type.Object(
  {
    metadata: Type.Optional(
      Type.Object({ labels: Type.Optional(StringMap()) }, { description: 'Labels for backups made from this spec.' }),
    ),
    includedNamespaces: NullableStrings('Namespaces to include; empty or "*" means all.'),
    excludedNamespaces: NullableStrings('Namespaces to leave out.'),
    includedResources: NullableStrings('Resources (resource.group) to include; empty means all.'),
    excludedResources: NullableStrings('Resources (resource.group) to leave out.'),
    includedClusterScopedResources: NullableStrings('Cluster-scoped resources to include ("*" for all).'),
    excludedClusterScopedResources: NullableStrings('Cluster-scoped resources to leave out.'),
    includedNamespaceScopedResources: NullableStrings('Namespace-scoped resources to include ("*" for all).'),
    excludedNamespaceScopedResources: NullableStrings('Namespace-scoped resources to leave out.'),
    labelSelector: Type.Optional(Nullable(LabelSelector, { description: 'Only objects matching this selector.' })),
    orLabelSelectors: Type.Optional(
      Nullable(Type.Array(LabelSelector), { description: 'Objects matching any of these selectors.' }),
    ),
    snapshotVolumes: Type.Optional(Nullable(Type.Boolean(), { description: 'Take volume snapshots; null = auto.' })),
    ttl: Type.Optional(Duration({ description: 'How long to keep the backup, e.g. "720h0m0s".' })),
    includeClusterResources: Type.Optional(
      Nullable(Type.Boolean(), { description: 'Include cluster-scoped resources; null = auto.' }),
    ),
    hooks: Type.Optional(
      Type.Object(
        { resources: Type.Optional(Nullable(Type.Array(BackupResourceHookSpec))) },
        { description: 'Commands to run in pods around their backup.' },
      ),
    ),
    storageLocation: Type.Optional(Type.String({ description: 'BackupStorageLocation to store the backup in.' })),
    volumeSnapshotLocations: Type.Optional(Type.Array(Type.String())),
    defaultVolumesToRestic: Type.Optional(Nullable(Type.Boolean(), { description: 'Deprecated alias.' })),
    defaultVolumesToFsBackup: Type.Optional(
      Nullable(Type.Boolean(), { description: 'Back up all pod volumes with fs-backup unless opted out.' }),
    ),
    orderedResources: Type.Optional(
      Nullable(StringMap(), { description: 'Per kind, "ns/name,ns/name" order to back up in.' }),
    ),
    csiSnapshotTimeout: Type.Optional(Duration({ description: 'How long to wait for CSI snapshots.' })),
    itemOperationTimeout: Type.Optional(Duration({ description: 'How long to wait for async item operations.' })),
    resourcePolicy: Type.Optional(TypedLocalObjectReference),
    snapshotMoveData: Type.Optional(
      Nullable(Type.Boolean(), { description: 'Move snapshot data to the storage location.' }),
    ),
    datamover: Type.Optional(Type.String({ description: 'Data mover to use; "" or "velero" = built-in.' })),
    uploaderConfig: Type.Optional(
      Nullable(Type.Object({ parallelFilesUpload: Type.Optional(Type.Integer()) }), {
        description: 'Settings for the file uploader.',
      }),
    ),
    volumeGroupSnapshotLabelKey: Type.Optional(Type.String({ description: 'PVC label grouping volume snapshots.' })),
  },
  { description: 'What to back up and how.' },
);
export type BackupSpec = Static<typeof BackupSpec>;

export const BackupProgress = Type.Object({
  totalItems: Type.Optional(Type.Integer()),
  itemsBackedUp: Type.Optional(Type.Integer()),
});
export type BackupProgress = Static<typeof BackupProgress>;

export const HookStatus = Type.Object({
  hooksAttempted: Type.Optional(Type.Integer()),
  hooksFailed: Type.Optional(Type.Integer()),
});
export type HookStatus = Static<typeof HookStatus>;

export const BackupStatus = Type.Object(
  {
    version: Type.Optional(Type.Integer({ description: 'Deprecated backup format version (1).' })),
    formatVersion: Type.Optional(Type.String({ description: 'Backup format version, e.g. "1.1.0".' })),
    expiration: Type.Optional(Timestamp({ description: 'When the backup becomes eligible for deletion.' })),
    phase: Type.Optional(StringEnum(BackupPhases, { description: 'Where the backup is in its life.' })),
    validationErrors: Type.Optional(Nullable(Type.Array(Type.String()))),
    startTimestamp: Type.Optional(Timestamp()),
    completionTimestamp: Type.Optional(Timestamp()),
    volumeSnapshotsAttempted: Type.Optional(Type.Integer()),
    volumeSnapshotsCompleted: Type.Optional(Type.Integer()),
    failureReason: Type.Optional(Type.String()),
    warnings: Type.Optional(Type.Integer({ description: 'Warnings logged while backing up.' })),
    errors: Type.Optional(Type.Integer({ description: 'Errors logged while backing up.' })),
    progress: Type.Optional(Nullable(BackupProgress)),
    csiVolumeSnapshotsAttempted: Type.Optional(Type.Integer()),
    csiVolumeSnapshotsCompleted: Type.Optional(Type.Integer()),
    backupItemOperationsAttempted: Type.Optional(Type.Integer()),
    backupItemOperationsCompleted: Type.Optional(Type.Integer()),
    backupItemOperationsFailed: Type.Optional(Type.Integer()),
    hookStatus: Type.Optional(Nullable(HookStatus)),
  },
  { description: 'What happened to the backup so far.' },
);
export type BackupStatus = Static<typeof BackupStatus>;

export const BackupKind = defineKind({
  kind: 'Backup',
  description: 'A Backup captures cluster objects and their volumes at one point in time into a storage location.',
  spec: BackupSpec,
  status: BackupStatus,
});
export type Backup = Static<typeof BackupKind.schema>;
