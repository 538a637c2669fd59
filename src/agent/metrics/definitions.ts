/**
 * The metrics every node agent exports on /metrics (docs/metrics.md): Velero v1.17's node-agent metrics (namespace
 * `podVolume`, names, help texts, labels and buckets of its pkg/metrics/metrics.go), and cairn's own, prefixed
 * `cairn_`, for what Velero does not count (pod volume backup/restore outcomes, durations and bytes of every kind).
 */
import { defineMetric, type MetricDefinition } from '../../base/metrics.js';

export const NodeMetric = {
  PodVolumeBackupEnqueue: 'podVolume_pod_volume_backup_enqueue_count',
  PodVolumeBackupDequeue: 'podVolume_pod_volume_backup_dequeue_count',
  PodVolumeOperationLatency: 'podVolume_pod_volume_operation_latency_seconds',
  PodVolumeOperationLatencyGauge: 'podVolume_pod_volume_operation_latency_seconds_gauge',
  DataUploadSuccessTotal: 'podVolume_data_upload_success_total',
  DataUploadFailureTotal: 'podVolume_data_upload_failure_total',
  DataUploadCancelTotal: 'podVolume_data_upload_cancel_total',
  DataDownloadSuccessTotal: 'podVolume_data_download_success_total',
  DataDownloadFailureTotal: 'podVolume_data_download_failure_total',
  DataDownloadCancelTotal: 'podVolume_data_download_cancel_total',
  // cairn's own
  PodVolumeBackupSuccessTotal: 'cairn_pod_volume_backup_success_total',
  PodVolumeBackupFailureTotal: 'cairn_pod_volume_backup_failure_total',
  PodVolumeBackupCancelTotal: 'cairn_pod_volume_backup_cancel_total',
  PodVolumeRestoreSuccessTotal: 'cairn_pod_volume_restore_success_total',
  PodVolumeRestoreFailureTotal: 'cairn_pod_volume_restore_failure_total',
  PodVolumeRestoreCancelTotal: 'cairn_pod_volume_restore_cancel_total',
  DataPathDuration: 'cairn_data_path_duration_seconds',
  DataPathBytesTotal: 'cairn_data_path_bytes_total',
  DataPathRunning: 'cairn_data_path_running_operations',
} as const;
export type NodeMetric = (typeof NodeMetric)[keyof typeof NodeMetric];

export const NODE_LABEL = 'node';
export const OPERATION_LABEL = 'operation';
export const BACKUP_NAME_LABEL = 'backupName';
export const PVB_NAME_LABEL = 'pod_volume_backup';
/** cairn's label for the data-path kind: PodVolumeBackup, PodVolumeRestore, DataUpload or DataDownload. */
export const KIND_LABEL = 'kind';

const byNode = (name: NodeMetric, help: string) => defineMetric(name, 'counter', help, [NODE_LABEL]);
const latencyLabels = [NODE_LABEL, OPERATION_LABEL, BACKUP_NAME_LABEL, PVB_NAME_LABEL];
const dataPathLabels = [NODE_LABEL, KIND_LABEL];

export const NODE_METRICS: readonly MetricDefinition[] = [
  byNode(NodeMetric.PodVolumeBackupEnqueue, 'Total number of pod_volume_backup objects enqueued'),
  byNode(NodeMetric.PodVolumeBackupDequeue, 'Total number of pod_volume_backup objects dequeued'),
  defineMetric(NodeMetric.PodVolumeOperationLatencyGauge, 'gauge', 'Gauge metric indicating time taken, in seconds, to perform pod volume operations', latencyLabels),
  defineMetric(NodeMetric.PodVolumeOperationLatency, 'histogram', 'Time taken to complete pod volume operations, in seconds', latencyLabels),
  byNode(NodeMetric.DataUploadSuccessTotal, 'Total number of successful uploaded snapshots'),
  byNode(NodeMetric.DataUploadFailureTotal, 'Total number of failed uploaded snapshots'),
  byNode(NodeMetric.DataUploadCancelTotal, 'Total number of canceled uploaded snapshots'),
  byNode(NodeMetric.DataDownloadSuccessTotal, 'Total number of successful downloaded snapshots'),
  byNode(NodeMetric.DataDownloadFailureTotal, 'Total number of failed downloaded snapshots'),
  byNode(NodeMetric.DataDownloadCancelTotal, 'Total number of canceled downloaded snapshots'),
  byNode(NodeMetric.PodVolumeBackupSuccessTotal, 'Total number of completed pod volume backups'),
  byNode(NodeMetric.PodVolumeBackupFailureTotal, 'Total number of failed pod volume backups'),
  byNode(NodeMetric.PodVolumeBackupCancelTotal, 'Total number of canceled pod volume backups'),
  byNode(NodeMetric.PodVolumeRestoreSuccessTotal, 'Total number of completed pod volume restores'),
  byNode(NodeMetric.PodVolumeRestoreFailureTotal, 'Total number of failed pod volume restores'),
  byNode(NodeMetric.PodVolumeRestoreCancelTotal, 'Total number of canceled pod volume restores'),
  defineMetric(NodeMetric.DataPathDuration, 'histogram', 'Time from start to end of pod volume backups and restores, data uploads and downloads, in seconds', dataPathLabels),
  defineMetric(NodeMetric.DataPathBytesTotal, 'counter', 'Bytes processed by the data path (the growth of status.progress.bytesDone); its rate is the live throughput', dataPathLabels),
  defineMetric(NodeMetric.DataPathRunning, 'gauge', 'Pod volume backups and restores, data uploads and downloads in progress on this node', dataPathLabels),
];

/**
 * The per-node counters whose series exist from the start (Velero's InitMetricsForNode, and cairn's own): every
 * counter labelled by the node alone.
 */
export const NODE_INIT_METRICS: readonly NodeMetric[] = NODE_METRICS.filter((m) => m.type === 'counter' && m.labelNames.length === 1 && m.labelNames[0] === NODE_LABEL).map(
  (m) => m.name as NodeMetric,
);
