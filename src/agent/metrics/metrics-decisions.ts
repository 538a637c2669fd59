/**
 * Which node-agent metric moves for which observed change of a PodVolumeBackup, PodVolumeRestore, DataUpload or
 * DataDownload worked on by this node (docs/metrics.md), as pure functions of what was seen before and now:
 *   → InProgress (PVB)                          podVolume_pod_volume_backup_enqueue_count
 *   not finished → Completed | Failed | Canceled  the kind's success | failure | cancel total; the duration;
 *                                               for a Completed PVB also Velero's dequeue count and operation latency
 *   status.progress.bytesDone grows             cairn_data_path_bytes_total by the growth
 * A first sight (the list when the agent starts) moves nothing, so a restarted agent does not count twice.
 */
import { DataPathPhase } from '../../api/schema.js';
import { secondsBetween, type MetricEffect } from '../../base/metrics.js';
import type { DataPathObject } from '../controllers/data-path-decisions.js';
import type { DataPathKind } from '../exposer/hosting-pod.js';
import { BACKUP_NAME_LABEL, KIND_LABEL, NODE_INIT_METRICS, NODE_LABEL, NodeMetric, OPERATION_LABEL, PVB_NAME_LABEL } from './definitions.js';

/** What is remembered of a data-path CR between two observations. */
export interface DataPathSeen {
  phase: string;
  bytesDone: number;
}

export function seenOf(obj: DataPathObject): DataPathSeen {
  return { phase: obj.status?.phase || DataPathPhase.New, bytesDone: obj.status?.progress?.bytesDone ?? 0 };
}

/** The node that works on the CR: spec.node for a PVB, status.node for the others (as the controllers decide). */
export function processingNodeOf(kind: DataPathKind, obj: DataPathObject): string | undefined {
  const o = obj as DataPathObject & { spec: { node?: string }; status?: { node?: string } };
  return kind === 'PodVolumeBackup' ? o.spec?.node : o.status?.node;
}

const OUTCOME_METRICS: Record<DataPathKind, Record<'Completed' | 'Failed' | 'Canceled', NodeMetric>> = {
  PodVolumeBackup: { Completed: NodeMetric.PodVolumeBackupSuccessTotal, Failed: NodeMetric.PodVolumeBackupFailureTotal, Canceled: NodeMetric.PodVolumeBackupCancelTotal },
  PodVolumeRestore: { Completed: NodeMetric.PodVolumeRestoreSuccessTotal, Failed: NodeMetric.PodVolumeRestoreFailureTotal, Canceled: NodeMetric.PodVolumeRestoreCancelTotal },
  DataUpload: { Completed: NodeMetric.DataUploadSuccessTotal, Failed: NodeMetric.DataUploadFailureTotal, Canceled: NodeMetric.DataUploadCancelTotal },
  DataDownload: { Completed: NodeMetric.DataDownloadSuccessTotal, Failed: NodeMetric.DataDownloadFailureTotal, Canceled: NodeMetric.DataDownloadCancelTotal },
};

const isEnd = (phase: string): phase is 'Completed' | 'Failed' | 'Canceled' =>
  phase === DataPathPhase.Completed || phase === DataPathPhase.Failed || phase === DataPathPhase.Canceled;

export interface DataPathChange {
  kind: DataPathKind;
  /** This node agent's node. */
  node: string;
  /** undefined: first sight. */
  prev: DataPathSeen | undefined;
  next: DataPathObject;
}

export function dataPathEffects({ kind, node, prev, next }: DataPathChange): MetricEffect[] {
  if (!prev || processingNodeOf(kind, next) !== node) return [];
  const now = seenOf(next);
  const byNode = { [NODE_LABEL]: node };
  const byKind = { [NODE_LABEL]: node, [KIND_LABEL]: kind };
  const effects: MetricEffect[] = [];
  if (now.bytesDone > prev.bytesDone) effects.push({ op: 'inc', metric: NodeMetric.DataPathBytesTotal, labels: byKind, value: now.bytesDone - prev.bytesDone });
  if (kind === 'PodVolumeBackup' && prev.phase !== DataPathPhase.InProgress && now.phase === DataPathPhase.InProgress && !isEnd(prev.phase)) {
    effects.push({ op: 'inc', metric: NodeMetric.PodVolumeBackupEnqueue, labels: byNode });
  }
  if (isEnd(prev.phase) || !isEnd(now.phase)) return effects;
  effects.push({ op: 'inc', metric: OUTCOME_METRICS[kind][now.phase], labels: byNode });
  const seconds = secondsBetween(next.status?.startTimestamp, next.status?.completionTimestamp);
  if (seconds !== undefined) effects.push({ op: 'observe', metric: NodeMetric.DataPathDuration, labels: byKind, value: seconds });
  if (kind === 'PodVolumeBackup' && now.phase === DataPathPhase.Completed) {
    effects.push({ op: 'inc', metric: NodeMetric.PodVolumeBackupDequeue, labels: byNode });
    if (seconds !== undefined) {
      const labels = podVolumeLatencyLabels(next, node);
      effects.push(
        { op: 'observe', metric: NodeMetric.PodVolumeOperationLatency, labels, value: seconds },
        { op: 'set', metric: NodeMetric.PodVolumeOperationLatencyGauge, labels, value: seconds },
      );
    }
  }
  return effects;
}

/** Velero's labels of a PVB's latency: `<pvb>-<location>-<pod namespace>-<uploader>-backup` and `<ns>/<backup>`. */
function podVolumeLatencyLabels(pvb: DataPathObject, node: string): Record<string, string> {
  const o = pvb as DataPathObject & { spec: { backupStorageLocation?: string; uploaderType?: string; pod?: { namespace?: string } } };
  const name = o.metadata?.name ?? '';
  const owner = o.metadata?.ownerReferences?.[0]?.name ?? '';
  return {
    [NODE_LABEL]: node,
    [OPERATION_LABEL]: `${name}-${o.spec.backupStorageLocation ?? ''}-${o.spec.pod?.namespace ?? ''}-${o.spec.uploaderType ?? ''}-backup`,
    [BACKUP_NAME_LABEL]: `${o.metadata?.namespace ?? ''}/${owner}`,
    [PVB_NAME_LABEL]: name,
  };
}

/** The node's counters exist from the start at 0 (Velero's InitMetricsForNode). */
export function nodeInitEffects(node: string): MetricEffect[] {
  return NODE_INIT_METRICS.map((metric) => ({ op: 'init' as const, metric, labels: { [NODE_LABEL]: node } }));
}

/** How many CRs of each kind this node is moving bytes for now (phase InProgress). */
export function runningEffects(node: string, byKind: ReadonlyMap<DataPathKind, readonly DataPathObject[]>): MetricEffect[] {
  return [...byKind].map(([kind, objects]) => ({
    op: 'set' as const,
    metric: NodeMetric.DataPathRunning,
    labels: { [NODE_LABEL]: node, [KIND_LABEL]: kind },
    value: objects.filter((o) => seenOf(o).phase === DataPathPhase.InProgress && processingNodeOf(kind, o) === node).length,
  }));
}
