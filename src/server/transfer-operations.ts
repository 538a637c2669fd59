/**
 * The item-operation records (docs/backup.md) of the custom resources that move a volume's bytes:
 * PodVolumeBackups and DataUploads for a backup, PodVolumeRestores and DataDownloads for a restore. Each kind says
 * which action, resource and phase mapping it has; how its status becomes the record's status is the same here.
 */
import type { Backup, BackupOperation, OperationStatus, ResourceIdentifier, Restore, RestoreOperation } from '../api/index.js';
import { creationTimestampOf, OperationPhase, optionalStatusTime, statusTime } from '../api/index.js';

/** The part of a PVB/PVR/DataUpload/DataDownload status a record is made from. */
export interface TransferStatus {
  progress?: { bytesDone?: number; totalBytes?: number };
  startTimestamp?: string | null;
  completionTimestamp?: string | null;
}

export interface TransferRecord {
  action: string;
  /** The item the operation is recorded against (Group, Resource, Namespace, Name). */
  resource: ResourceIdentifier;
  operationID: string;
  phase: OperationPhase;
  error?: string | undefined;
  status: TransferStatus | undefined;
  description: string;
  /** The custom resource's creation time (RFC 3339), when known. */
  created?: string | undefined;
}

/**
 * A backup's record phase of one PVB or DataUpload: Completed and Failed (or Canceled) as the object ended; one given
 * up on (`timedOut`) Failed; otherwise InProgress once `running` (what counts as running is the kind's), else New.
 */
export function backupTransferPhase(phase: string | undefined, o: { timedOut: boolean; running: boolean }): OperationPhase {
  if (phase === 'Completed') return OperationPhase.Completed;
  if (phase === 'Failed' || phase === 'Canceled' || o.timedOut) return OperationPhase.Failed;
  return o.running ? OperationPhase.InProgress : OperationPhase.New;
}

function common(r: TransferRecord): OperationStatus {
  return { phase: r.phase, ...(r.error ? { error: r.error } : {}) };
}

/** What both kinds of record say the same way: the description and, once known, creation and start times. */
function described(r: TransferRecord): Pick<OperationStatus, 'description' | 'created' | 'started'> {
  return {
    description: r.description,
    ...(r.created ? { created: r.created } : {}),
    ...(r.status?.startTimestamp ? { started: r.status.startTimestamp } : {}),
  };
}

/** A backup's record: progress as reported so far, `updated` the completion time or now. */
export function backupTransferOperation(backup: Backup, r: TransferRecord, now: Date): BackupOperation {
  const progress = r.status?.progress;
  return {
    spec: {
      backupName: backup.metadata.name ?? '',
      backupUID: backup.metadata.uid ?? '',
      backupItemAction: r.action,
      resourceIdentifier: r.resource,
      operationID: r.operationID,
      postOperationItems: null,
    },
    status: {
      ...common(r),
      ...(progress?.bytesDone !== undefined ? { nCompleted: progress.bytesDone } : {}),
      ...(progress?.totalBytes !== undefined ? { nTotal: progress.totalBytes } : {}),
      operationUnits: 'Bytes',
      ...described(r),
      updated: r.status?.completionTimestamp ?? statusTime(now),
    },
  };
}

/** What a backup's transfer object is, as its record needs it: its status and phase, and when it was created. */
interface TransferObject {
  metadata?: object | undefined;
  status?: (TransferStatus & { phase?: string | undefined }) | undefined;
}

/**
 * A backup's record of one PVB or DataUpload: described by its phase (New until it has one), created when the object
 * was; `r` says what the kind decides.
 */
export function backupTransferOperationOf(backup: Backup, obj: TransferObject, r: Omit<TransferRecord, 'status' | 'description' | 'created'>, now: Date): BackupOperation {
  return backupTransferOperation(backup, { ...r, status: obj.status, description: obj.status?.phase || 'New', created: optionalStatusTime(creationTimestampOf(obj)) }, now);
}

/** How a backup's transfer objects stand: how many there are, completed, failed (or canceled), and the ones still running. */
export interface TransferCounts<T> {
  attempted: number;
  completed: number;
  failed: number;
  /** Not terminal yet. */
  pending: T[];
}

export function countTransfers<T>(objects: readonly T[], isTerminal: (obj: T) => boolean, succeeded: (obj: T) => boolean): TransferCounts<T> {
  return {
    attempted: objects.length,
    completed: objects.filter(succeeded).length,
    failed: objects.filter((o) => isTerminal(o) && !succeeded(o)).length,
    pending: objects.filter((o) => !isTerminal(o)),
  };
}

/** The errors a backup reports for its transfer objects, each in the namespace of its volume (none for one without an error). */
export function transferErrors<T>(objects: readonly T[], errorOf: (obj: T) => string | undefined, namespaceOf: (obj: T) => string): { namespace: string; message: string }[] {
  const out: { namespace: string; message: string }[] = [];
  for (const obj of objects) {
    const message = errorOf(obj);
    if (message) out.push({ namespace: namespaceOf(obj), message });
  }
  return out;
}

/** A restore's record: progress once the total is known, `updated` only once complete. */
export function restoreTransferOperation(restore: Restore, r: TransferRecord): RestoreOperation {
  const progress = r.status?.progress;
  return {
    spec: {
      restoreName: restore.metadata.name ?? '',
      restoreUID: restore.metadata.uid ?? '',
      restoreItemAction: r.action,
      resourceIdentifier: r.resource,
      operationID: r.operationID,
    },
    status: {
      ...common(r),
      ...(progress?.totalBytes !== undefined ? { nCompleted: progress.bytesDone ?? 0, nTotal: progress.totalBytes, operationUnits: 'Bytes' } : {}),
      ...described(r),
      ...(r.status?.completionTimestamp ? { updated: r.status.completionTimestamp } : {}),
    },
  };
}
