/**
 * A backup's kept CSI snapshots while it waits for them: which are ready, which are still being cut, which are past
 * the backup's `csiSnapshotTimeout` (counted from the VolumeSnapshot's creation) and given up on with the error the
 * snapshot controller or driver reported. Errors before the deadline are treated as passing (the snapshot controller
 * retries them), so a snapshot fails only at its deadline. `decide...` is pure; `readCsiSnapshotStates` reads the
 * cluster.
 */
import { Labels, OperationPhase, creationTimestampOf, statusTime, type Backup } from '../../api/index.js';
import type { Kube } from '../../kube/client.js';
import { listVolumeSnapshotsWith, readVolumeSnapshotContent } from './snapshot-api.js';
import { isSnapshotReady, snapshotError, type CsiSnapshotRef, type CsiSnapshotState, type VolumeSnapshot } from './snapshot-objects.js';
import { csiSnapshotTimeoutOf, timeoutMsOr } from '../datamover/backup-decision.js';

/** The backup's csiSnapshotTimeout in ms (an unreadable value falls back to Velero's 10 minutes). */
export function csiSnapshotTimeoutMs(backup: Backup): number {
  return timeoutMsOr(csiSnapshotTimeoutOf(backup), 10 * 60_000);
}

/** A VolumeSnapshot of the backup as a ref (the PV name comes from the stored volume info, when known). */
export function refOfVolumeSnapshot(vs: VolumeSnapshot, pvName = ''): CsiSnapshotRef {
  const created = creationTimestampOf(vs) ?? new Date(0);
  return {
    namespace: vs.metadata.namespace ?? '',
    name: vs.metadata.name ?? '',
    pvcName: vs.spec?.source?.persistentVolumeClaimName ?? '',
    pvcUid: '',
    pvName,
    driver: '',
    snapshotClass: vs.spec?.volumeSnapshotClassName ?? '',
    created: statusTime(created),
  };
}

/** The backup's VolumeSnapshots (label velero.io/backup-uid) with their contents, sorted by namespace/name. */
export async function readCsiSnapshotStates(kube: Kube, backup: Backup): Promise<CsiSnapshotState[]> {
  const uid = backup.metadata.uid ?? '';
  if (!uid || backup.spec?.snapshotMoveData === true) return [];
  const found = await listVolumeSnapshotsWith(kube, `${Labels.BackupUID}=${uid}`);
  const states: CsiSnapshotState[] = [];
  for (const vs of found.filter((v) => !v.metadata.deletionTimestamp)) {
    const content = await readVolumeSnapshotContent(kube, vs.status?.boundVolumeSnapshotContentName ?? '');
    states.push({ ref: refOfVolumeSnapshot(vs), snapshot: vs, content });
  }
  const key = (s: CsiSnapshotState) => `${s.ref.namespace}/${s.ref.name}`;
  return states.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

export type CsiSnapshotVerdict = { state: CsiSnapshotState; phase: typeof OperationPhase.Completed } | { state: CsiSnapshotState; phase: typeof OperationPhase.Failed; error: string } | { state: CsiSnapshotState; phase: typeof OperationPhase.InProgress | typeof OperationPhase.New; deadlineMs: number };

export interface CsiSnapshotTracking {
  verdicts: CsiSnapshotVerdict[];
  attempted: number;
  completed: number;
  failed: number;
  /** Every snapshot is ready or given up on. */
  done: boolean;
  /** The earliest deadline of a snapshot still being cut (ms since epoch), if any. */
  nextDeadlineMs: number | undefined;
}

/** The error a snapshot given up on leaves in the backup's results. */
export function csiSnapshotTimeoutError(s: CsiSnapshotState, timeout: string): string {
  const why = snapshotError(s);
  return `CSI snapshot ${s.ref.namespace}/${s.ref.name} of PVC ${s.ref.namespace}/${s.ref.pvcName} was not ready within the CSI snapshot timeout ${timeout}${why ? `: ${why}` : ''}`;
}

export function trackCsiSnapshots(opts: { states: readonly CsiSnapshotState[]; timeoutMs: number; timeout: string; nowMs: number }): CsiSnapshotTracking {
  const verdicts: CsiSnapshotVerdict[] = opts.states.map((state) => {
    if (isSnapshotReady(state)) return { state, phase: OperationPhase.Completed };
    const deadlineMs = Date.parse(state.ref.created) + opts.timeoutMs;
    if (!state.snapshot || opts.nowMs >= deadlineMs) return { state, phase: OperationPhase.Failed, error: csiSnapshotTimeoutError(state, opts.timeout) };
    return { state, phase: state.snapshot.status ? OperationPhase.InProgress : OperationPhase.New, deadlineMs };
  });
  const pending = verdicts.filter((v): v is Extract<CsiSnapshotVerdict, { deadlineMs: number }> => 'deadlineMs' in v);
  return {
    verdicts,
    attempted: verdicts.length,
    completed: verdicts.filter((v) => v.phase === OperationPhase.Completed).length,
    failed: verdicts.filter((v) => v.phase === OperationPhase.Failed).length,
    done: pending.length === 0,
    nextDeadlineMs: pending.length ? Math.min(...pending.map((p) => p.deadlineMs)) : undefined,
  };
}
