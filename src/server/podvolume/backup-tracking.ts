/**
 * What a backup makes of its PodVolumeBackups while it waits for them (Velero's upload progress monitoring: item operations): the tracker's decision (all
 * terminal? any failed? past the fs-backup timeout?), the item-operation records (`<name>-itemoperations.json.gz`)
 * and the volume info entries (`<name>-volumeinfo.json.gz`) derived from the PVBs. Pure functions.
 */
import {
  Annotations,
  OperationPhase,
  PodVolumeBackupPhase,
  parseDuration,
  type Backup,
  type BackupOperation,
  type PodVolumeBackup,
} from '../../api/index.js';
import { BackupMethods, withTransferOutcome, type BackupVolumeInfo } from '../../api/volume-info.js';
import { isTerminal, podVolumeBackupError, succeeded } from './backup-pvb.js';
import { backupTransferOperationOf, backupTransferPhase, countTransfers, transferErrors, type TransferCounts } from '../transfer-operations.js';

/** The backup item action name cairn records PVB operations under. */
export const POD_VOLUME_BACKUP_ACTION = 'velero.io/pod-volume-backup';
export const POD_VOLUME_OPERATION_PREFIX = 'pvb-';

export function operationIdOf(pvb: PodVolumeBackup): string {
  return `${POD_VOLUME_OPERATION_PREFIX}${pvb.metadata.name ?? ''}`;
}

/** How long a backup's PVBs may take: annotation `velero.io/pod-volume-timeout`, else the server's --fs-backup-timeout. */
export function fsBackupTimeoutMs(backup: Backup, serverTimeoutMs: number): number {
  const text = backup.metadata.annotations?.[Annotations.PodVolumeTimeout];
  if (text) {
    try {
      const ms = parseDuration(text);
      if (ms > 0) return ms;
    } catch {
      /* an unreadable annotation falls back to the server's value */
    }
  }
  return serverTimeoutMs;
}

export interface TrackingState extends TransferCounts<PodVolumeBackup> {
  allTerminal: boolean;
  /** The deadline passed with PVBs still pending. */
  timedOut: boolean;
  /** When the deadline is (ms since epoch). */
  deadlineMs: number;
}

export interface TrackOptions {
  pvbs: readonly PodVolumeBackup[];
  /** The backup's start (status.startTimestamp), ms since epoch. */
  startedMs: number;
  timeoutMs: number;
  nowMs: number;
}

export function trackPodVolumeBackups(opts: TrackOptions): TrackingState {
  const counts = countTransfers(opts.pvbs, isTerminal, succeeded);
  const deadlineMs = opts.startedMs + opts.timeoutMs;
  return {
    ...counts,
    allTerminal: counts.pending.length === 0,
    timedOut: counts.pending.length > 0 && opts.nowMs >= deadlineMs,
    deadlineMs,
  };
}

/** The backup errors of its PVBs (Velero's wording); `timedOut` also reports the ones still pending. */
export function podVolumeErrors(pvbs: readonly PodVolumeBackup[], timedOut: boolean): { namespace: string; message: string }[] {
  return transferErrors(
    pvbs,
    (pvb) => podVolumeBackupError(pvb, timedOut),
    (pvb) => pvb.spec.pod.namespace ?? '',
  );
}

/** A PVB runs once InProgress (or Canceling); Accepted and Prepared still count as New. */
function operationPhase(pvb: PodVolumeBackup, timedOut: boolean): OperationPhase {
  const phase = pvb.status?.phase;
  return backupTransferPhase(phase, { timedOut, running: phase === PodVolumeBackupPhase.InProgress || phase === PodVolumeBackupPhase.Canceling });
}

/** One BackupOperation per PVB (docs/backup.md). */
export function backupOperationFor(opts: { backup: Backup; pvb: PodVolumeBackup; timedOut?: boolean; now: Date }): BackupOperation {
  const { backup, pvb } = opts;
  const timedOut = Boolean(opts.timedOut);
  const phase = operationPhase(pvb, timedOut);
  return backupTransferOperationOf(
    backup,
    pvb,
    {
      action: POD_VOLUME_BACKUP_ACTION,
      resource: { Group: '', Resource: 'pods', Namespace: pvb.spec.pod.namespace ?? '', Name: pvb.spec.pod.name ?? '' },
      operationID: operationIdOf(pvb),
      phase,
      error: phase === OperationPhase.Failed ? podVolumeBackupError(pvb, timedOut) : undefined,
    },
    opts.now,
  );
}

/** Identifies the volume info entry of a pod volume (PVC volumes and emptyDirs alike). */
export function podVolumeInfoKey(podNamespace: string, podName: string, volumeName: string): string {
  return `${podNamespace}/${podName}/${volumeName}`;
}

/**
 * The volume info entry of a PVB. `base` is the entry written when the PVB was created (it carries the PVC/PV
 * names and pvInfo, which the PVB does not); without it the entry is built from the PVB alone.
 */
export function volumeInfoFor(pvb: PodVolumeBackup, base?: BackupVolumeInfo): BackupVolumeInfo {
  const phase = pvb.status?.phase ?? '';
  const pvcName = pvb.metadata.annotations?.[Annotations.PVCName];
  const entry: BackupVolumeInfo = {
    ...(base ?? {}),
    ...(pvcName && !base?.pvcName ? { pvcName, pvcNamespace: pvb.spec.pod.namespace ?? '' } : {}),
    backupMethod: BackupMethods.PodVolumeBackup,
    snapshotDataMoved: false,
    preserveLocalSnapshot: false,
    skipped: false,
    pvbInfo: {
      ...(pvb.status?.snapshotID ? { snapshotHandle: pvb.status.snapshotID } : {}),
      ...(pvb.status?.progress?.totalBytes ? { size: pvb.status.progress.totalBytes } : {}),
      uploaderType: pvb.spec.uploaderType || 'kopia',
      volumeName: pvb.spec.volume,
      podName: pvb.spec.pod.name ?? '',
      podNamespace: pvb.spec.pod.namespace ?? '',
      ...(pvb.spec.node ? { nodeName: pvb.spec.node } : {}),
      Phase: phase,
    },
  };
  const failed = phase === PodVolumeBackupPhase.Failed || phase === PodVolumeBackupPhase.Canceled;
  return withTransferOutcome(entry, pvb.status, phase === PodVolumeBackupPhase.Completed ? 'succeeded' : failed ? 'failed' : undefined);
}

/**
 * The final volume info list: stored entries that are not fs-backup ones, plus one entry per PVB (merged with the
 * entry written when it was created, found by pod and volume; a PV-keyed skipped entry of the same PV is replaced).
 */
export function mergeVolumeInfo(stored: readonly BackupVolumeInfo[], pvbs: readonly PodVolumeBackup[]): BackupVolumeInfo[] {
  const bases = new Map<string, BackupVolumeInfo>();
  for (const e of stored) {
    if (e.backupMethod === BackupMethods.PodVolumeBackup && e.pvbInfo) bases.set(podVolumeInfoKey(e.pvbInfo.podNamespace, e.pvbInfo.podName, e.pvbInfo.volumeName), e);
  }
  const fresh = pvbs.map((p) => volumeInfoFor(p, bases.get(podVolumeInfoKey(p.spec.pod.namespace ?? '', p.spec.pod.name ?? '', p.spec.volume))));
  const pvsTaken = new Set(fresh.map((e) => e.pvName).filter(Boolean));
  const others = stored.filter((e) => e.backupMethod !== BackupMethods.PodVolumeBackup && !(e.pvName && pvsTaken.has(e.pvName)));
  return [...others, ...fresh];
}
