/**
 * What a backup makes of its DataUploads while it waits for them (Velero's upload progress monitoring: item operations): the tracker's decision (terminal?
 * failed? past the item operation timeout?), the item-operation records and the volume info entries derived from
 * them (docs/data-mover.md: `velero.io/csi-pvc-backupper` operations, `CSISnapshot` entries with
 * `snapshotDataMoved: true`). Pure functions.
 */
import {
  DataUploadPhase,
  OperationPhase,
  creationTimestampOf,
  type Backup,
  type BackupOperation,
  type DataUpload,
} from '../../api/index.js';
import { BackupMethods, withTransferOutcome, type BackupVolumeInfo, type CSISnapshotInfo } from '../../api/volume-info.js';
import { itemOperationTimeoutOf, timeoutMsOr } from './backup-decision.js';
import { DEFAULT_DATA_MOVER, operationIdOfDataUpload } from './backup-objects.js';
import { backupTransferOperationOf, backupTransferPhase, countTransfers, transferErrors, type TransferCounts } from '../transfer-operations.js';

/** The backup item action name Velero records DataUpload operations under. */
export const CSI_PVC_BACKUP_ACTION = 'velero.io/csi-pvc-backupper';
export const UPLOADER_KOPIA = 'kopia';

const TERMINAL: ReadonlySet<string> = new Set([DataUploadPhase.Completed, DataUploadPhase.Failed, DataUploadPhase.Canceled]);

export function isDataUploadTerminal(du: DataUpload): boolean {
  return TERMINAL.has(du.status?.phase ?? '');
}

export function dataUploadSucceeded(du: DataUpload): boolean {
  return du.status?.phase === DataUploadPhase.Completed;
}

/** The backup's item operation timeout in ms (an unreadable value falls back to Velero's 4 h). */
export function itemOperationTimeoutMs(backup: Backup): number {
  return timeoutMsOr(itemOperationTimeoutOf(backup), 4 * 3600_000);
}

/** When a DataUpload's time is up: its creation plus the backup's item operation timeout. */
export function dataUploadDeadlineMs(du: DataUpload, timeoutMs: number, fallbackStartMs: number): number {
  return (creationTimestampOf(du)?.getTime() ?? fallbackStartMs) + timeoutMs;
}

export interface DataUploadTracking extends TransferCounts<DataUpload> {
  /** Pending past their deadline: to be canceled, counted as failed. */
  expired: DataUpload[];
  /** Every DataUpload is terminal or expired: the backup can be finalized as far as they are concerned. */
  done: boolean;
  /** The earliest deadline of a pending, unexpired DataUpload (ms since epoch), if any. */
  nextDeadlineMs: number | undefined;
}

export function trackDataUploads(opts: { dataUploads: readonly DataUpload[]; timeoutMs: number; startedMs: number; nowMs: number }): DataUploadTracking {
  const counts = countTransfers(opts.dataUploads, isDataUploadTerminal, dataUploadSucceeded);
  const { pending } = counts;
  const expired: DataUpload[] = [];
  let nextDeadlineMs: number | undefined;
  for (const d of pending) {
    const deadline = dataUploadDeadlineMs(d, opts.timeoutMs, opts.startedMs);
    if (opts.nowMs >= deadline) expired.push(d);
    else nextDeadlineMs = nextDeadlineMs === undefined ? deadline : Math.min(nextDeadlineMs, deadline);
  }
  return {
    ...counts,
    expired,
    done: pending.length === expired.length,
    nextDeadlineMs,
  };
}

const where = (du: DataUpload) => `${du.spec.sourceNamespace}/${du.spec.sourcePVC}`;

/** The timeout message (the DataUpload's status message when it is canceled, and the backup error). */
export function dataUploadTimeoutMessage(du: DataUpload, timeout: string): string {
  return `DataUpload ${du.metadata.name ?? ''} of PVC ${where(du)} did not finish within the item operation timeout ${timeout}, mark it as cancel`;
}

/** The error a DataUpload leaves in the backup (undefined when it completed or is still running in time). */
export function dataUploadError(du: DataUpload, timedOut: boolean): string | undefined {
  const phase = du.status?.phase ?? '';
  const message = du.status?.message ? `: ${du.status.message}` : '';
  if (phase === DataUploadPhase.Completed) return undefined;
  if (phase === DataUploadPhase.Failed) return `data upload ${du.metadata.name ?? ''} of PVC ${where(du)} failed${message}`;
  if (phase === DataUploadPhase.Canceled) return `data upload ${du.metadata.name ?? ''} of PVC ${where(du)} was canceled${message}`;
  return timedOut ? `data upload ${du.metadata.name ?? ''} of PVC ${where(du)} timed out in phase ${phase || DataUploadPhase.New}` : undefined;
}

/** The backup errors of its DataUploads, by the PVC's namespace. `timedOut` names the ones given up on. */
export function dataUploadErrors(dus: readonly DataUpload[], timedOut: ReadonlySet<string>): { namespace: string; message: string }[] {
  return transferErrors(
    dus,
    (du) => dataUploadError(du, timedOut.has(du.metadata.name ?? '')),
    (du) => du.spec.sourceNamespace,
  );
}

/** A DataUpload runs from the moment a node accepted it. */
function operationPhase(du: DataUpload, timedOut: boolean): OperationPhase {
  const phase = du.status?.phase;
  return backupTransferPhase(phase, { timedOut, running: phase !== undefined && phase !== DataUploadPhase.New });
}

/** One BackupOperation per DataUpload (docs/backup.md), as Velero's CSI PVC action records it. */
export function dataUploadOperationFor(opts: { backup: Backup; du: DataUpload; timedOut?: boolean; now: Date }): BackupOperation {
  const { backup, du } = opts;
  const timedOut = Boolean(opts.timedOut);
  const phase = operationPhase(du, timedOut);
  return backupTransferOperationOf(
    backup,
    du,
    {
      action: CSI_PVC_BACKUP_ACTION,
      resource: { Group: '', Resource: 'persistentvolumeclaims', Namespace: du.spec.sourceNamespace, Name: du.spec.sourcePVC },
      operationID: operationIdOfDataUpload(du),
      phase,
      error: phase === OperationPhase.Failed ? dataUploadError(du, timedOut) : undefined,
    },
    opts.now,
  );
}

/** The entry written when the DataUpload is created (no result yet); `pvName`/`pvInfo` come from the claim's PV. */
export function initialDataMovementEntry(opts: {
  du: DataUpload;
  pvName: string;
  pvInfo?: BackupVolumeInfo['pvInfo'];
}): BackupVolumeInfo {
  return dataMovementVolumeInfo(opts.du, { pvcName: opts.du.spec.sourcePVC, pvcNamespace: opts.du.spec.sourceNamespace, pvName: opts.pvName, snapshotDataMoved: true, preserveLocalSnapshot: false, skipped: false, ...(opts.pvInfo ? { pvInfo: opts.pvInfo } : {}) });
}

/**
 * The volume info entry of a DataUpload. `base` is the stored entry of the same PVC (it carries the PV name and
 * pvInfo, which the DataUpload does not); `csi` what was read of the source VolumeSnapshot before it was deleted.
 * `timedOut` marks a DataUpload given up on as failed.
 */
export function dataMovementVolumeInfo(du: DataUpload, base?: BackupVolumeInfo, csi?: CSISnapshotInfo, timedOut = false): BackupVolumeInfo {
  const phase = du.status?.phase ?? '';
  const operationID = operationIdOfDataUpload(du);
  const entry: BackupVolumeInfo = {
    ...(base ?? {}),
    pvcName: du.spec.sourcePVC,
    pvcNamespace: du.spec.sourceNamespace,
    backupMethod: BackupMethods.CSISnapshot,
    snapshotDataMoved: true,
    preserveLocalSnapshot: false,
    skipped: false,
    csiSnapshotInfo: csi ??
      base?.csiSnapshotInfo ?? { snapshotHandle: '', size: 0, driver: du.spec.csiSnapshot?.driver ?? '', vscName: '', ReadyToUse: null },
    snapshotDataMovementInfo: {
      dataMover: du.spec.datamover || DEFAULT_DATA_MOVER,
      uploaderType: UPLOADER_KOPIA,
      snapshotHandle: du.status?.snapshotID ?? '',
      operationID,
      size: du.status?.progress?.totalBytes ?? 0,
      Phase: phase,
    },
  };
  const failed = phase === DataUploadPhase.Failed || phase === DataUploadPhase.Canceled || timedOut;
  return withTransferOutcome(entry, du.status, phase === DataUploadPhase.Completed ? 'succeeded' : failed ? 'failed' : undefined);
}

const claimKey = (ns: string | undefined, name: string | undefined) => `${ns ?? ''}/${name ?? ''}`;

/**
 * The final volume info list: every stored entry, with the entry of each data-moved PVC replaced by the one built
 * from its DataUpload (found by PVC namespace/name). `csi` holds the source snapshots' details by DataUpload name.
 */
export function mergeDataMovementVolumeInfo(opts: {
  stored: readonly BackupVolumeInfo[];
  dataUploads: readonly DataUpload[];
  csi?: ReadonlyMap<string, CSISnapshotInfo>;
  timedOut?: ReadonlySet<string>;
}): BackupVolumeInfo[] {
  const byClaim = new Map<string, DataUpload>();
  for (const du of opts.dataUploads) byClaim.set(claimKey(du.spec.sourceNamespace, du.spec.sourcePVC), du);
  const used = new Set<string>();
  const out = opts.stored.map((e) => {
    const key = claimKey(e.pvcNamespace, e.pvcName);
    const du = e.pvcName ? byClaim.get(key) : undefined;
    if (!du || e.backupMethod === BackupMethods.PodVolumeBackup) return e;
    used.add(key);
    return dataMovementVolumeInfo(du, e, opts.csi?.get(du.metadata.name ?? ''), opts.timedOut?.has(du.metadata.name ?? '') ?? false);
  });
  for (const [key, du] of byClaim) {
    if (!used.has(key)) out.push(dataMovementVolumeInfo(du, undefined, opts.csi?.get(du.metadata.name ?? ''), opts.timedOut?.has(du.metadata.name ?? '') ?? false));
  }
  return out;
}
