/**
 * The decisions of the backup operations controller (backup-operations-controller.ts carries them out), as pure
 * functions of the Backup and of the trackers' view of its PodVolumeBackups and DataUploads: which Backups it owns,
 * which step one takes, the phase and counters after a look at its operations, and when to look again. Tested table
 * by table in test/unit/server/backup/backup-operations.test.ts.
 */
import { BackupPhase, isCancelRequested, type Backup } from '../../api/index.js';
import type { Results } from '../../api/results.js';
import type { CsiSnapshotTracking } from '../csi/snapshot-tracking.js';
import type { DataUploadTracking } from '../datamover/backup-tracking.js';
import type { TrackingState } from '../podvolume/backup-tracking.js';

/** How often a waiting backup is looked at even without PVB events (progress counters, the timeout). */
export const OPERATIONS_RESYNC_MS = 10_000;
/** How often a backup waiting for CSI snapshots to be ready looks at them (no watch on VolumeSnapshots). */
export const CSI_SNAPSHOT_POLL_MS = 2000;

export const WAITING: ReadonlySet<string> = new Set([BackupPhase.WaitingForPluginOperations, BackupPhase.WaitingForPluginOperationsPartiallyFailed]);
export const FINALIZING: ReadonlySet<string> = new Set([BackupPhase.Finalizing, BackupPhase.FinalizingPartiallyFailed]);

/** Set while the backup controller uploads a backup's items; such a backup is not tracked yet. */
export const UPLOADING_ANNOTATION = 'backup.cairn.io/uploading';

/** Backups this controller drives (the backup controller leaves them alone). */
export function ownedByOperations(backup: Pick<Backup, 'status'> & { metadata?: { annotations?: Record<string, string> | undefined } | undefined }): boolean {
  if (backup.metadata?.annotations?.[UPLOADING_ANNOTATION] === 'true') return false;
  const phase = backup.status?.phase ?? '';
  if (WAITING.has(phase)) return true;
  return FINALIZING.has(phase) && (backup.status?.backupItemOperationsAttempted ?? 0) > 0;
}

export type OperationsStep =
  | { step: 'track' }
  | { step: 'finalize' }
  /** Asked to be canceled: Canceling, written on this controller's queue so no finalization is under way. */
  | { step: 'cancel' }
  | { step: 'none' };

export function operationsStep(backup: Backup | undefined): OperationsStep {
  if (!backup || !ownedByOperations(backup)) return { step: 'none' };
  if (isCancelRequested(backup)) return { step: 'cancel' };
  return WAITING.has(backup.status?.phase ?? '') ? { step: 'track' } : { step: 'finalize' };
}

export interface TrackOutcome {
  phase: typeof BackupPhase.WaitingForPluginOperations | typeof BackupPhase.WaitingForPluginOperationsPartiallyFailed | typeof BackupPhase.Finalizing | typeof BackupPhase.FinalizingPartiallyFailed;
  /** Every operation is terminal or given up on: finalize now. */
  done: boolean;
  attempted: number;
  completed: number;
  failed: number;
  /** When to look again (undefined when done). */
  requeueAfterMs: number | undefined;
}

/** The CSI snapshots of a backup that has none. */
export const NO_CSI_SNAPSHOTS: Pick<CsiSnapshotTracking, 'attempted' | 'completed' | 'failed' | 'done' | 'nextDeadlineMs'> = { attempted: 0, completed: 0, failed: 0, done: true, nextDeadlineMs: undefined };

/**
 * The Backup after one look at its PVBs, DataUploads, CSI snapshots, plugin operations and post hooks: still waiting or Finalizing,
 * PartiallyFailed once one failed or timed out, and the next look at the earliest deadline (between 1 s and the
 * resync period; snapshots being cut are polled).
 */
export function trackOutcome(o: {
  backup: Backup;
  pvbs: TrackingState;
  dataUploads: DataUploadTracking;
  csiSnapshots?: Pick<CsiSnapshotTracking, 'attempted' | 'completed' | 'failed' | 'done' | 'nextDeadlineMs'>;
  /** Post hooks still waiting for their pod's volumes. */
  hooksWaiting?: number;
  /** Plugins' asynchronous operations after this look at them, and how often they are asked for progress. */
  pluginOperations?: { attempted: number; completed: number; failed: number; pending: number; syncMs: number };
  nowMs: number;
}): TrackOutcome {
  const { pvbs, dataUploads: dus } = o;
  const csi = o.csiSnapshots ?? NO_CSI_SNAPSHOTS;
  const plugins = o.pluginOperations ?? { attempted: 0, completed: 0, failed: 0, pending: 0, syncMs: OPERATIONS_RESYNC_MS };
  const failed = pvbs.failed + dus.failed + csi.failed + plugins.failed;
  const expired = pvbs.timedOut || dus.expired.length > 0;
  const partially = o.backup.status?.phase === BackupPhase.WaitingForPluginOperationsPartiallyFailed || failed > 0 || expired;
  const done = (pvbs.allTerminal || pvbs.timedOut) && dus.done && csi.done && (o.hooksWaiting ?? 0) === 0 && plugins.pending === 0;
  const phase = done
    ? partially
      ? BackupPhase.FinalizingPartiallyFailed
      : BackupPhase.Finalizing
    : partially
      ? BackupPhase.WaitingForPluginOperationsPartiallyFailed
      : BackupPhase.WaitingForPluginOperations;
  const deadlines = [...(pvbs.allTerminal ? [] : [pvbs.deadlineMs]), ...(dus.nextDeadlineMs !== undefined ? [dus.nextDeadlineMs] : [])];
  if (csi.nextDeadlineMs !== undefined) deadlines.push(Math.min(csi.nextDeadlineMs, o.nowMs + CSI_SNAPSHOT_POLL_MS));
  const next = deadlines.length ? Math.min(...deadlines) : o.nowMs + OPERATIONS_RESYNC_MS;
  // Plugins are asked for progress every --item-operation-sync-frequency (nothing wakes the backup otherwise).
  const resync = plugins.pending ? Math.min(OPERATIONS_RESYNC_MS, plugins.syncMs) : OPERATIONS_RESYNC_MS;
  return {
    phase,
    done,
    attempted: pvbs.attempted + dus.attempted + csi.attempted + plugins.attempted,
    completed: pvbs.completed + dus.completed + csi.completed + plugins.completed,
    failed,
    requeueAfterMs: done ? undefined : Math.max(1000, Math.min(resync, next - o.nowMs)),
  };
}

/** The final phase: PartiallyFailed when finalizing partially, or an operation or an item had errors. */
export function finalPhase(phase: string, errors: number): typeof BackupPhase.Completed | typeof BackupPhase.PartiallyFailed {
  return phase === BackupPhase.FinalizingPartiallyFailed || errors > 0 ? BackupPhase.PartiallyFailed : BackupPhase.Completed;
}

/** Adds messages to results, each once (a finalization run twice does not repeat them). */
export function addErrors(results: Results, errors: readonly { namespace?: string; message: string }[]): Results {
  const out = structuredClone(results);
  out.errors ??= {};
  for (const e of errors) {
    const list = e.namespace ? ((out.errors.namespaces ??= {})[e.namespace] ??= []) : (out.errors.velero ??= []);
    if (!list.includes(e.message)) list.push(e.message);
  }
  return out;
}
