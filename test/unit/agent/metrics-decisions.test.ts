import { describe, expect, it } from 'vitest';
import type { DataPathObject } from '../../../src/agent/controllers/data-path-decisions.js';
import type { DataPathKind } from '../../../src/agent/exposer/hosting-pod.js';
import { NodeMetric } from '../../../src/agent/metrics/definitions.js';
import { dataPathEffects, nodeInitEffects, runningEffects, seenOf, type DataPathSeen } from '../../../src/agent/metrics/metrics-decisions.js';
import type { MetricEffect } from '../../../src/base/metrics.js';
import { dataPath } from '../../support/builders.js';

const NODE = 'node-a';

/** A CR of `kind` worked on by `node` (spec.node for a PVB, status.node for the others). */
function cr(kind: DataPathKind, phase: string, opts: { node?: string; bytesDone?: number; start?: string; end?: string } = {}): DataPathObject {
  const o = dataPath('x-1').kind(kind).phase(phase).build() as DataPathObject & { spec: Record<string, unknown>; status: Record<string, unknown> };
  const node = opts.node ?? NODE;
  if (kind === 'PodVolumeBackup') {
    o.spec = { ...o.spec, node, backupStorageLocation: 'default', uploaderType: 'kopia', pod: { namespace: 'app', name: 'p' } };
    o.metadata = { ...o.metadata, ownerReferences: [{ apiVersion: 'velero.io/v1', kind: 'Backup', name: 'b1', uid: 'u' }] };
  } else {
    o.status = { ...o.status, node };
  }
  if (opts.bytesDone !== undefined) o.status = { ...o.status, progress: { bytesDone: opts.bytesDone, totalBytes: 1000 } };
  if (opts.start) o.status = { ...o.status, startTimestamp: opts.start };
  if (opts.end) o.status = { ...o.status, completionTimestamp: opts.end };
  return o;
}

const seen = (phase: string, bytesDone = 0): DataPathSeen => ({ phase, bytesDone });

function counted(effects: MetricEffect[]): string[] {
  return effects.filter((e) => e.op === 'inc').map((e) => `${e.metric}${(e as { value?: number }).value !== undefined ? `+${(e as { value?: number }).value}` : ''}`);
}

describe('dataPathEffects: which node counter moves for which observed change', () => {
  const timed = { start: '2026-03-01T10:00:00Z', end: '2026-03-01T10:01:05.900Z' };
  const cases: { name: string; kind: DataPathKind; prev: DataPathSeen | undefined; next: DataPathObject; counters: string[] }[] = [
    { name: 'first sight (agent start) counts nothing', kind: 'PodVolumeBackup', prev: undefined, next: cr('PodVolumeBackup', 'Completed', timed), counters: [] },
    { name: "another node's PVB counts nothing here", kind: 'PodVolumeBackup', prev: seen('InProgress'), next: cr('PodVolumeBackup', 'Completed', { ...timed, node: 'node-b' }), counters: [] },
    { name: 'PVB Prepared → InProgress is enqueued', kind: 'PodVolumeBackup', prev: seen('Prepared'), next: cr('PodVolumeBackup', 'InProgress'), counters: [NodeMetric.PodVolumeBackupEnqueue] },
    { name: 'PVB InProgress → InProgress with more bytes adds the growth', kind: 'PodVolumeBackup', prev: seen('InProgress', 100), next: cr('PodVolumeBackup', 'InProgress', { bytesDone: 350 }), counters: [`${NodeMetric.DataPathBytesTotal}+250`] },
    { name: 'PVB InProgress → Completed: success and dequeue', kind: 'PodVolumeBackup', prev: seen('InProgress'), next: cr('PodVolumeBackup', 'Completed', timed), counters: [NodeMetric.PodVolumeBackupSuccessTotal, NodeMetric.PodVolumeBackupDequeue] },
    { name: 'PVB InProgress → Failed', kind: 'PodVolumeBackup', prev: seen('InProgress'), next: cr('PodVolumeBackup', 'Failed'), counters: [NodeMetric.PodVolumeBackupFailureTotal] },
    { name: 'PVB Canceling → Canceled', kind: 'PodVolumeBackup', prev: seen('Canceling'), next: cr('PodVolumeBackup', 'Canceled'), counters: [NodeMetric.PodVolumeBackupCancelTotal] },
    { name: 'PVB Completed → Completed counts nothing', kind: 'PodVolumeBackup', prev: seen('Completed'), next: cr('PodVolumeBackup', 'Completed', timed), counters: [] },
    { name: 'PVR InProgress → Completed', kind: 'PodVolumeRestore', prev: seen('InProgress'), next: cr('PodVolumeRestore', 'Completed'), counters: [NodeMetric.PodVolumeRestoreSuccessTotal] },
    { name: 'PVR Accepted → Failed', kind: 'PodVolumeRestore', prev: seen('Accepted'), next: cr('PodVolumeRestore', 'Failed'), counters: [NodeMetric.PodVolumeRestoreFailureTotal] },
    { name: 'PVR Prepared → InProgress is no PVB enqueue', kind: 'PodVolumeRestore', prev: seen('Prepared'), next: cr('PodVolumeRestore', 'InProgress'), counters: [] },
    { name: 'DataUpload InProgress → Completed', kind: 'DataUpload', prev: seen('InProgress', 10), next: cr('DataUpload', 'Completed', { bytesDone: 1000 }), counters: [`${NodeMetric.DataPathBytesTotal}+990`, NodeMetric.DataUploadSuccessTotal] },
    { name: 'DataUpload New → Canceled', kind: 'DataUpload', prev: seen('New'), next: cr('DataUpload', 'Canceled'), counters: [NodeMetric.DataUploadCancelTotal] },
    { name: 'DataUpload InProgress → Failed', kind: 'DataUpload', prev: seen('InProgress'), next: cr('DataUpload', 'Failed'), counters: [NodeMetric.DataUploadFailureTotal] },
    { name: 'DataDownload InProgress → Completed', kind: 'DataDownload', prev: seen('InProgress'), next: cr('DataDownload', 'Completed'), counters: [NodeMetric.DataDownloadSuccessTotal] },
    { name: 'DataDownload InProgress → Failed', kind: 'DataDownload', prev: seen('InProgress'), next: cr('DataDownload', 'Failed'), counters: [NodeMetric.DataDownloadFailureTotal] },
    { name: 'DataDownload Canceling → Canceled', kind: 'DataDownload', prev: seen('Canceling'), next: cr('DataDownload', 'Canceled'), counters: [NodeMetric.DataDownloadCancelTotal] },
    { name: 'a DataDownload not yet claimed by a node counts nothing', kind: 'DataDownload', prev: seen('New'), next: cr('DataDownload', 'Canceled', { node: '' }), counters: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(counted(dataPathEffects({ kind: c.kind, node: NODE, prev: c.prev, next: c.next }))).toEqual(c.counters);
    });
  }

  it("a completed PVB observes its duration and Velero's operation latency with Velero's labels", () => {
    const effects = dataPathEffects({ kind: 'PodVolumeBackup', node: NODE, prev: seen('InProgress'), next: cr('PodVolumeBackup', 'Completed', timed) });
    const labels = { node: NODE, operation: 'x-1-default-app-kopia-backup', backupName: 'velero/b1', pod_volume_backup: 'x-1' };
    expect(effects).toContainEqual({ op: 'observe', metric: NodeMetric.DataPathDuration, labels: { node: NODE, kind: 'PodVolumeBackup' }, value: 65 });
    expect(effects).toContainEqual({ op: 'observe', metric: NodeMetric.PodVolumeOperationLatency, labels, value: 65 });
    expect(effects).toContainEqual({ op: 'set', metric: NodeMetric.PodVolumeOperationLatencyGauge, labels, value: 65 });
  });

  it('bytes that go down (a restarted data mover) add nothing', () => {
    expect(dataPathEffects({ kind: 'DataUpload', node: NODE, prev: seen('InProgress', 500), next: cr('DataUpload', 'InProgress', { bytesDone: 20 }) })).toEqual([]);
  });
});

describe('node gauges and start', () => {
  it("the node's counters appear at 0 from the start", () => {
    const init = nodeInitEffects(NODE);
    expect(init).toContainEqual({ op: 'init', metric: NodeMetric.DataUploadSuccessTotal, labels: { node: NODE } });
    expect(init).toContainEqual({ op: 'init', metric: NodeMetric.PodVolumeBackupSuccessTotal, labels: { node: NODE } });
  });

  it('running operations are the InProgress CRs of this node, per kind', () => {
    const byKind = new Map<DataPathKind, DataPathObject[]>([
      ['PodVolumeBackup', [cr('PodVolumeBackup', 'InProgress'), cr('PodVolumeBackup', 'InProgress', { node: 'node-b' }), cr('PodVolumeBackup', 'Completed')]],
      ['DataUpload', []],
    ]);
    expect(runningEffects(NODE, byKind)).toEqual([
      { op: 'set', metric: NodeMetric.DataPathRunning, labels: { node: NODE, kind: 'PodVolumeBackup' }, value: 1 },
      { op: 'set', metric: NodeMetric.DataPathRunning, labels: { node: NODE, kind: 'DataUpload' }, value: 0 },
    ]);
  });

  it('seenOf reads phase (New when unset) and bytes done', () => {
    expect(seenOf(cr('DataUpload', 'InProgress', { bytesDone: 7 }))).toEqual({ phase: 'InProgress', bytesDone: 7 });
    expect(seenOf(dataPath('n').build())).toEqual({ phase: 'New', bytesDone: 0 });
  });
});
