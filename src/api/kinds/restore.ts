/** velero.io/v1 Restore (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { defineKind } from '../meta.js';
import { Duration, FreeForm, LabelSelector, Nullable, NullableStrings, StringEnum, StringMap, Timestamp, TypedLocalObjectReference, namedValues } from '../schema.js';
import { HookErrorModes, HookSelectionFields, HookStatus } from './backup.js';

export const RestorePhases = [
  'New',
  'FailedValidation',
  'InProgress',
  'WaitingForPluginOperations',
  'WaitingForPluginOperationsPartiallyFailed',
  'Completed',
  'PartiallyFailed',
  'Failed',
  'Finalizing',
  'FinalizingPartiallyFailed',
  // cairn's own (Velero has no cancel): a canceled restore ends Canceling → Canceled (docs/restore.md).
  'Canceling',
  'Canceled',
] as const;
export const RestorePhase = namedValues(RestorePhases);
export type RestorePhase = (typeof RestorePhases)[number];

/** Phases a restore never leaves. */
export const RestoreTerminalPhases: readonly RestorePhase[] = ['Completed', 'PartiallyFailed', 'Failed', 'FailedValidation', 'Canceled'];
export function isRestoreDone(phase: string | undefined): boolean {
  return (RestoreTerminalPhases as readonly string[]).includes(phase ?? '');
}

/** `spec.existingResourcePolicy`: what to do when a restored object already exists. */
export const ExistingResourcePolicies = ['none', 'update'] as const;
export const ExistingResourcePolicy = namedValues(ExistingResourcePolicies);
export type ExistingResourcePolicy = (typeof ExistingResourcePolicies)[number];

export const ExecRestoreHook = Type.Object({
  container: Type.Optional(Type.String()),
  command: Type.Array(Type.String(), { minItems: 1 }),
  onError: Type.Optional(StringEnum(HookErrorModes)),
  execTimeout: Type.Optional(Duration({ description: 'How long the command may run.' })),
  waitTimeout: Type.Optional(Duration({ description: 'How long to wait for the container to be ready.' })),
  waitForReady: Type.Optional(Nullable(Type.Boolean())),
});
export type ExecRestoreHook = Static<typeof ExecRestoreHook>;

export const InitRestoreHook = Type.Object({
  initContainers: Type.Optional(
    Type.Array(FreeForm(), {
      description: 'Init containers (corev1.Container objects) to add to the restored pod.',
      'x-kubernetes-preserve-unknown-fields': true,
    }),
  ),
  timeout: Type.Optional(Duration()),
});
export type InitRestoreHook = Static<typeof InitRestoreHook>;

export const RestoreResourceHook = Type.Object({
  exec: Type.Optional(ExecRestoreHook),
  init: Type.Optional(InitRestoreHook),
});
export type RestoreResourceHook = Static<typeof RestoreResourceHook>;

export const RestoreResourceHookSpec = Type.Object({
  name: Type.String(),
  ...HookSelectionFields,
  postHooks: Type.Optional(Type.Array(RestoreResourceHook)),
});
export type RestoreResourceHookSpec = Static<typeof RestoreResourceHookSpec>;

export const RestoreSpec = Type.Object(
  {
    backupName: Type.Optional(Type.String({ description: 'Backup to restore from (or give scheduleName).' })),
    scheduleName: Type.Optional(
      Type.String({ description: 'Restore from the latest completed backup of this schedule.' }),
    ),
    includedNamespaces: NullableStrings('Namespaces to restore; empty means all.'),
    excludedNamespaces: NullableStrings('Namespaces not to restore.'),
    includedResources: NullableStrings('Resources (resource.group) to restore; empty means all.'),
    excludedResources: NullableStrings('Resources (resource.group) not to restore.'),
    namespaceMapping: Type.Optional(StringMap({ description: 'Source namespace → target namespace.' })),
    labelSelector: Type.Optional(Nullable(LabelSelector)),
    orLabelSelectors: Type.Optional(Nullable(Type.Array(LabelSelector))),
    restorePVs: Type.Optional(Nullable(Type.Boolean(), { description: 'Restore volumes from snapshots.' })),
    restoreStatus: Type.Optional(
      Nullable(
        Type.Object({
          includedResources: NullableStrings(),
          excludedResources: NullableStrings(),
        }),
        { description: 'Resources whose status is restored too.' },
      ),
    ),
    preserveNodePorts: Type.Optional(Nullable(Type.Boolean())),
    includeClusterResources: Type.Optional(Nullable(Type.Boolean())),
    hooks: Type.Optional(Type.Object({ resources: Type.Optional(Type.Array(RestoreResourceHookSpec)) })),
    // A plain string in Velero's CRD too: an unknown policy is a validation failure of the Restore (phase
    // FailedValidation), not an API error, so it is checked by the controller against ExistingResourcePolicies.
    existingResourcePolicy: Type.Optional(
      Nullable(Type.String(), { description: 'What to do with objects that exist: "none" or "update".' }),
    ),
    itemOperationTimeout: Type.Optional(Duration()),
    resourceModifier: Type.Optional(Nullable(TypedLocalObjectReference)),
    uploaderConfig: Type.Optional(
      Nullable(
        Type.Object({
          writeSparseFiles: Type.Optional(Nullable(Type.Boolean())),
          parallelFilesDownload: Type.Optional(Type.Integer()),
        }),
      ),
    ),
  },
  { description: 'What to restore and how.' },
);
export type RestoreSpec = Static<typeof RestoreSpec>;

export const RestoreProgress = Type.Object({
  totalItems: Type.Optional(Type.Integer()),
  itemsRestored: Type.Optional(Type.Integer()),
});
export type RestoreProgress = Static<typeof RestoreProgress>;

export const RestoreStatus = Type.Object(
  {
    phase: Type.Optional(StringEnum(RestorePhases)),
    validationErrors: Type.Optional(Nullable(Type.Array(Type.String()))),
    warnings: Type.Optional(Type.Integer()),
    errors: Type.Optional(Type.Integer()),
    failureReason: Type.Optional(Type.String()),
    startTimestamp: Type.Optional(Timestamp()),
    completionTimestamp: Type.Optional(Timestamp()),
    progress: Type.Optional(Nullable(RestoreProgress)),
    restoreItemOperationsAttempted: Type.Optional(Type.Integer()),
    restoreItemOperationsCompleted: Type.Optional(Type.Integer()),
    restoreItemOperationsFailed: Type.Optional(Type.Integer()),
    hookStatus: Type.Optional(Nullable(HookStatus)),
  },
  { description: 'What happened to the restore so far.' },
);
export type RestoreStatus = Static<typeof RestoreStatus>;

export const RestoreKind = defineKind({
  kind: 'Restore',
  description: 'A Restore brings objects and volume data from a backup back into the cluster.',
  spec: RestoreSpec,
  status: RestoreStatus,
});
export type Restore = Static<typeof RestoreKind.schema>;
