/**
 * The async item-operation records a backup or restore stores as `<name>-itemoperations.json.gz` /
 * `restore-<name>-itemoperations.json.gz` (docs/backup.md). Not a CRD: a JSON array in the bucket.
 * Note the resource identifier has no JSON tags in Velero, so its keys are capitalised.
 */
import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { Nullable, StringEnum, Timestamp, namedValues } from './schema.js';
import { parseWith } from './validation.js';
import { statusTime } from './time.js';

export const OperationPhases = ['New', 'InProgress', 'Completed', 'Failed'] as const;
export const OperationPhase = namedValues(OperationPhases);
export type OperationPhase = (typeof OperationPhases)[number];

export const ResourceIdentifier = Type.Object({
  Group: Type.String(),
  Resource: Type.String(),
  Namespace: Type.String(),
  Name: Type.String(),
});
export type ResourceIdentifier = Static<typeof ResourceIdentifier>;

export const OperationStatus = Type.Object({
  phase: Type.Optional(StringEnum(OperationPhases)),
  error: Type.Optional(Type.String()),
  nCompleted: Type.Optional(Type.Integer()),
  nTotal: Type.Optional(Type.Integer()),
  operationUnits: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  created: Type.Optional(Timestamp()),
  started: Type.Optional(Timestamp()),
  updated: Type.Optional(Timestamp()),
});
export type OperationStatus = Static<typeof OperationStatus>;

/** One record of the file: what the operation is (its owner's fields differ by kind) and where it stands. */
function operationRecord<Spec extends TProperties>(spec: Spec) {
  return Type.Object({ spec: Type.Object(spec), status: OperationStatus });
}

export const BackupOperation = operationRecord({
  backupName: Type.String(),
  backupUID: Type.String(),
  backupItemAction: Type.String(),
  resourceIdentifier: ResourceIdentifier,
  operationID: Type.String(),
  postOperationItems: Nullable(Type.Array(ResourceIdentifier)),
});
export type BackupOperation = Static<typeof BackupOperation>;

export const RestoreOperation = operationRecord({
  restoreName: Type.String(),
  restoreUID: Type.String(),
  restoreItemAction: Type.String(),
  resourceIdentifier: ResourceIdentifier,
  operationID: Type.String(),
});
export type RestoreOperation = Static<typeof RestoreOperation>;

const BackupOperationList = Nullable(Type.Array(BackupOperation));
const RestoreOperationList = Nullable(Type.Array(RestoreOperation));

/** Parses a decoded `-itemoperations.json` file of a backup; Go writes `null` for none. */
export function parseBackupOperations(value: unknown): BackupOperation[] {
  return parseWith(BackupOperationList, 'BackupOperation list', value) ?? [];
}

/** Parses a decoded `restore-<name>-itemoperations.json` file. */
export function parseRestoreOperations(value: unknown): RestoreOperation[] {
  return parseWith(RestoreOperationList, 'RestoreOperation list', value) ?? [];
}

/** A time as Velero writes metav1.Time in these files: RFC 3339 in whole seconds, UTC. */
export function operationTime(d: Date): string {
  return statusTime(d);
}
