import { describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { NODE_METRICS } from '../../../src/agent/metrics/definitions.js';
import { MetricsRegistry, VELERO_DURATION_BUCKETS, type MetricDefinition } from '../../../src/base/metrics.js';
import { parseListenAddress, startHttpListener, startMetricsEndpoint } from '../../../src/kube/health.js';
import { SERVER_METRICS } from '../../../src/server/metrics/definitions.js';

/**
 * Velero v1.17's metrics, copied from its pkg/metrics/metrics.go (namespace_name, type, help, labels): every one must
 * be exported exactly so, or dashboards and alerts made for Velero break.
 */
const VELERO_SERVER: [string, string, string, string[]][] = [
  ['velero_backup_tarball_size_bytes', 'gauge', 'Size, in bytes, of a backup', ['schedule']],
  ['velero_backup_last_successful_timestamp', 'gauge', 'Last time a backup ran successfully, Unix timestamp in seconds', ['schedule']],
  ['velero_backup_total', 'gauge', 'Current number of existent backups', []],
  ['velero_backup_attempt_total', 'counter', 'Total number of attempted backups', ['schedule']],
  ['velero_backup_success_total', 'counter', 'Total number of successful backups', ['schedule']],
  ['velero_backup_partial_failure_total', 'counter', 'Total number of partially failed backups', ['schedule']],
  ['velero_backup_failure_total', 'counter', 'Total number of failed backups', ['schedule']],
  ['velero_backup_validation_failure_total', 'counter', 'Total number of validation failed backups', ['schedule']],
  ['velero_backup_deletion_attempt_total', 'counter', 'Total number of attempted backup deletions', ['schedule']],
  ['velero_backup_deletion_success_total', 'counter', 'Total number of successful backup deletions', ['schedule']],
  ['velero_backup_deletion_failure_total', 'counter', 'Total number of failed backup deletions', ['schedule']],
  ['velero_backup_duration_seconds', 'histogram', 'Time taken to complete backup, in seconds', ['schedule']],
  ['velero_backup_items_total', 'gauge', 'Total number of items backed up', ['schedule']],
  ['velero_backup_items_errors', 'gauge', 'Total number of errors encountered during backup', ['schedule']],
  ['velero_backup_warning_total', 'counter', 'Total number of warned backups', ['schedule']],
  ['velero_backup_last_status', 'gauge', 'Last status of the backup. A value of 1 is success, 0 is failure', ['schedule']],
  ['velero_backup_location_status_gauge', 'gauge', 'The status of backup location.  A value of 1 is available, 0 is unavailable', ['backup_location_name']],
  ['velero_restore_total', 'gauge', 'Current number of existent restores', []],
  ['velero_restore_attempt_total', 'counter', 'Total number of attempted restores', ['schedule']],
  ['velero_restore_success_total', 'counter', 'Total number of successful restores', ['schedule']],
  ['velero_restore_partial_failure_total', 'counter', 'Total number of partially failed restores', ['schedule']],
  ['velero_restore_failed_total', 'counter', 'Total number of failed restores', ['schedule']],
  ['velero_restore_validation_failed_total', 'counter', 'Total number of failed restores failing validations', ['schedule']],
  ['velero_volume_snapshot_attempt_total', 'counter', 'Total number of attempted volume snapshots', ['schedule']],
  ['velero_volume_snapshot_success_total', 'counter', 'Total number of successful volume snapshots', ['schedule']],
  ['velero_volume_snapshot_failure_total', 'counter', 'Total number of failed volume snapshots', ['schedule']],
  ['velero_csi_snapshot_attempt_total', 'counter', 'Total number of CSI attempted volume snapshots', ['schedule', 'backupName']],
  ['velero_csi_snapshot_success_total', 'counter', 'Total number of CSI successful volume snapshots', ['schedule', 'backupName']],
  ['velero_csi_snapshot_failure_total', 'counter', 'Total number of CSI failed volume snapshots', ['schedule', 'backupName']],
];

const VELERO_NODE: [string, string, string, string[]][] = [
  ['podVolume_pod_volume_backup_enqueue_count', 'counter', 'Total number of pod_volume_backup objects enqueued', ['node']],
  ['podVolume_pod_volume_backup_dequeue_count', 'counter', 'Total number of pod_volume_backup objects dequeued', ['node']],
  ['podVolume_pod_volume_operation_latency_seconds_gauge', 'gauge', 'Gauge metric indicating time taken, in seconds, to perform pod volume operations', ['node', 'operation', 'backupName', 'pod_volume_backup']],
  ['podVolume_pod_volume_operation_latency_seconds', 'histogram', 'Time taken to complete pod volume operations, in seconds', ['node', 'operation', 'backupName', 'pod_volume_backup']],
  ['podVolume_data_upload_success_total', 'counter', 'Total number of successful uploaded snapshots', ['node']],
  ['podVolume_data_upload_failure_total', 'counter', 'Total number of failed uploaded snapshots', ['node']],
  ['podVolume_data_upload_cancel_total', 'counter', 'Total number of canceled uploaded snapshots', ['node']],
  ['podVolume_data_download_success_total', 'counter', 'Total number of successful downloaded snapshots', ['node']],
  ['podVolume_data_download_failure_total', 'counter', 'Total number of failed downloaded snapshots', ['node']],
  ['podVolume_data_download_cancel_total', 'counter', 'Total number of canceled downloaded snapshots', ['node']],
];

/** Velero's histograms: toSeconds(1m, 5m, 10m, 15m, 30m, 1h, 2h, 3h, 4h). */
const VELERO_BUCKETS = [60, 300, 600, 900, 1800, 3600, 7200, 10800, 14400];

/** Makes one series of every metric appear, with every label set, so the text shows labels and buckets. */
async function renderAll(defs: readonly MetricDefinition[]): Promise<string> {
  const registry = new MetricsRegistry(defs);
  for (const d of defs) {
    const labels = Object.fromEntries(d.labelNames.map((l) => [l, 'x']));
    registry.apply([d.type === 'histogram' ? { op: 'observe', metric: d.name, labels, value: 61 } : d.type === 'counter' ? { op: 'inc', metric: d.name, labels } : { op: 'set', metric: d.name, labels, value: 1 }]);
  }
  return registry.text();
}

function checkAgainstVelero(defs: readonly MetricDefinition[], velero: [string, string, string, string[]][], text: string): void {
  for (const [name, type, help, labels] of velero) {
    const def = defs.find((d) => d.name === name);
    expect(def, name).toBeDefined();
    expect(text).toContain(`# HELP ${name} ${help}\n`);
    expect(text).toContain(`# TYPE ${name} ${type}\n`);
    expect([...(def?.labelNames ?? [])]).toEqual(labels);
    const sample = type === 'histogram' ? `${name}_bucket{le="60",` : `${name}${labels.length ? '{' : ' '}`;
    expect(text).toContain(sample);
    if (labels.length) expect(text).toMatch(new RegExp(`^${name}(_bucket)?\\{${type === 'histogram' ? 'le="[^"]+",' : ''}${labels.map((l) => `${l}="x"`).join(',')}\\}`, 'm'));
    if (type === 'histogram') {
      expect([...(def?.buckets ?? [])]).toEqual(VELERO_BUCKETS);
      for (const le of [...VELERO_BUCKETS, '+Inf']) expect(text).toContain(`${name}_bucket{le="${le}"`);
    }
  }
}

describe('the registry exports Velero v1.17 metrics unchanged', () => {
  it("server: every Velero server metric, same name, type, help, labels and buckets; cairn's own are prefixed cairn_", async () => {
    checkAgainstVelero(SERVER_METRICS, VELERO_SERVER, await renderAll(SERVER_METRICS));
    const extra = SERVER_METRICS.map((d) => d.name).filter((n) => !VELERO_SERVER.some(([v]) => v === n));
    for (const name of extra) expect(name).toMatch(/^cairn_/);
  });

  it("node agent: every Velero node metric; cairn's own are prefixed cairn_", async () => {
    checkAgainstVelero(NODE_METRICS, VELERO_NODE, await renderAll(NODE_METRICS));
    const extra = NODE_METRICS.map((d) => d.name).filter((n) => !VELERO_NODE.some(([v]) => v === n));
    expect(extra.length).toBeGreaterThan(0);
    for (const name of extra) expect(name).toMatch(/^cairn_/);
    expect(VELERO_DURATION_BUCKETS).toEqual(VELERO_BUCKETS);
  });
});

describe('MetricsRegistry effects', () => {
  const defs: MetricDefinition[] = [
    { name: 't_total', help: 'h', type: 'counter', labelNames: ['s'] },
    { name: 't_gauge', help: 'h', type: 'gauge', labelNames: ['s'] },
  ];

  it('init makes a counter appear at 0 and never overwrites a gauge that has a value', async () => {
    const r = new MetricsRegistry(defs);
    r.apply([{ op: 'init', metric: 't_total', labels: { s: '' } }]);
    expect(await r.value('t_total', { s: '' })).toBe(0);
    r.apply([{ op: 'set', metric: 't_gauge', labels: { s: 'a' }, value: 0 }, { op: 'init', metric: 't_gauge', labels: { s: 'a' }, value: 1 }, { op: 'init', metric: 't_gauge', labels: { s: 'b' }, value: 1 }]);
    expect(await r.value('t_gauge', { s: 'a' })).toBe(0);
    expect(await r.value('t_gauge', { s: 'b' })).toBe(1);
  });

  it('setMax only raises; remove drops the series', async () => {
    const r = new MetricsRegistry(defs);
    r.apply([{ op: 'setMax', metric: 't_gauge', labels: { s: 'a' }, value: 5 }, { op: 'setMax', metric: 't_gauge', labels: { s: 'a' }, value: 3 }]);
    expect(await r.value('t_gauge', { s: 'a' })).toBe(5);
    r.apply([{ op: 'remove', metric: 't_gauge', labels: { s: 'a' } }]);
    expect(await r.value('t_gauge', { s: 'a' })).toBeUndefined();
  });

  it('refuses an effect of the wrong kind or on an unknown metric', () => {
    const r = new MetricsRegistry(defs);
    expect(() => r.apply([{ op: 'inc', metric: 't_gauge', labels: { s: '' } }])).toThrow(/needs a counter/);
    expect(() => r.apply([{ op: 'inc', metric: 'nope', labels: {} }])).toThrow(/not defined/);
  });

  it('scrape-time gauges are computed before rendering', async () => {
    const r = new MetricsRegistry(defs);
    let n = 0;
    r.onScrape(() => r.apply([{ op: 'set', metric: 't_gauge', labels: { s: '' }, value: ++n }]));
    expect(await r.text()).toContain('t_gauge{s=""} 1');
    expect(await r.text()).toContain('t_gauge{s=""} 2');
  });
});

describe('/metrics over HTTP and --metrics-address', () => {
  const get = (port: number, path: string) =>
    new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      })
        .on('error', reject)
        .end();
    });

  it('serves the text format on the health listener, or on a listener of its own', async () => {
    const registry = new MetricsRegistry(SERVER_METRICS, { processMetrics: true });
    const health = await startHttpListener({ port: 0, host: '127.0.0.1' });
    try {
      expect(await startMetricsEndpoint({ health, metrics: registry })).toBeUndefined();
      const res = await get(health.port, '/metrics');
      expect(res.status).toBe(200);
      expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.body).toContain('# TYPE velero_backup_total gauge');
      expect(res.body).toContain('process_cpu_user_seconds_total');
      expect((await get(health.port, '/metricsx')).status).toBe(404);

      const own = await startMetricsEndpoint({ health, metrics: registry, address: { host: '127.0.0.1', port: 0 } });
      try {
        expect(own).toBeDefined();
        expect((await get(own?.port ?? 0, '/metrics')).body).toContain('velero_backup_total');
      } finally {
        await own?.close();
      }
    } finally {
      await health.close();
    }
  });

  it("parses Velero's address forms", () => {
    expect(parseListenAddress('--metrics-address', ':8085')).toEqual({ port: 8085 });
    expect(parseListenAddress('--metrics-address', '0.0.0.0:9000')).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(parseListenAddress('--metrics-address', '[::1]:9000')).toEqual({ host: '::1', port: 9000 });
    expect(parseListenAddress('--metrics-address', '')).toBeUndefined();
    expect(() => parseListenAddress('--metrics-address', '8085')).toThrow(/--metrics-address: "8085" is not an address/);
    expect(() => parseListenAddress('--metrics-address', ':99999')).toThrow(/not an address/);
  });
});
