/**
 * Prometheus metrics on real nodes (docs/metrics.md): cairn installed from this tree's image, the server's and every
 * node agent's /metrics scraped through the API server's pod proxy (as `kubectl get --raw` or a Prometheus with
 * API-server access would), before and after one Completed fs-backup backup and one Failed backup (its location's
 * bucket is gone when it uploads). Each scrape passes `promtool check metrics` (the format parses; the linter finds
 * nothing in cairn's own names, only in Velero's, which are kept as they are), and the counters moved exactly:
 * attempts +2, success +1, failure +1, one pod volume backup on the workload's node and none on the other. A server
 * restarted afterwards counts nothing again, and sets its gauges from the backups that exist.
 */
import { spawn } from 'node:child_process';
import { CreateBucketCommand, DeleteBucketCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureToolBinary } from '../../tools/local-cluster/toolchain.js';
import { applyWithNamespace, clusterInfo, kubectl, namespacesGone, s3Client } from '../support/cluster.js';
import { cairn, type CliResult, locationAvailable } from '../support/cli.js';
import { writeCredentialsFile } from '../support/server-install.js';
import { waitFor } from '../support/wait.js';

const NS = 'cairn-e2e-metrics';
const APP = 'e2e-metrics-app';
const OK = 'metrics-ok';
const FAILED = 'metrics-failed';
const DOOMED = 'doomed';
const MANUAL = { schedule: '' };

let promtoolPath: string;
let kubeconfig: string;
const run = (args: string[]): Promise<CliResult> => cairn([...args, '-n', NS], { kubeconfig });

/** One sample of a scrape: the value of `name` with exactly these labels, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.keys(got).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

function promtool(args: string[], input: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtoolPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 128, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** `promtool check metrics`: the text parses, and the linter's findings are none of them in cairn's own names. */
async function checkWithPromtool(text: string, what: string): Promise<void> {
  const parsed = await promtool(['check', 'metrics', '--extended', '--lint=none'], text);
  expect(parsed.code, `${what}: ${parsed.stderr}`).toBe(0);
  const linted = await promtool(['check', 'metrics'], text);
  // 0: no findings; 3: findings (Velero's own names: camelCase podVolume_*, gauges named *_total or *_gauge...).
  expect([0, 3], `${what}: ${linted.stderr}`).toContain(linted.code);
  const problems = linted.stderr.split('\n').filter(Boolean);
  expect(problems.filter((p) => p.startsWith('cairn_')), what).toEqual([]);
  expect(problems.every((p) => /^(velero_|podVolume_|nodejs_)/.test(p)), `${what}: ${linted.stderr}`).toBe(true);
}

interface PodJson {
  metadata: { name: string };
  spec: { nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

async function podsOf(selector: string | undefined, namespace = NS): Promise<PodJson[]> {
  const args = ['get', 'pods', '-n', namespace, ...(selector ? ['-l', selector] : []), '-o', 'json'];
  return (JSON.parse((await kubectl(args)).stdout) as { items: PodJson[] }).items;
}

const ready = (p: PodJson) => p.status?.phase === 'Running' && Boolean(p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));

/** GET /metrics of a pod through the API server's pod proxy. */
async function scrape(pod: string, port: number): Promise<string> {
  return (await kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/pods/${pod}:${port}/proxy/metrics`])).stdout;
}

async function serverPod(): Promise<string> {
  const pods = await waitFor(async () => {
    const all = await podsOf('deploy=cairn');
    return all.length === 1 && ready(all[0]!) ? all : undefined;
  }, { timeoutMs: 180_000, intervalMs: 1000, description: 'one Ready cairn server pod' });
  return pods[0]!.metadata.name;
}

/** Node name → its node agent's pod. */
async function nodeAgents(): Promise<Map<string, string>> {
  const pods = await podsOf('name=node-agent');
  return new Map(pods.filter(ready).map((p) => [p.spec.nodeName ?? '', p.metadata.name]));
}

interface Scrapes {
  server: string;
  agents: Map<string, string>;
}

async function scrapeAll(): Promise<Scrapes> {
  const server = await scrape(await serverPod(), 8085);
  await checkWithPromtool(server, 'server /metrics');
  const agents = new Map<string, string>();
  for (const [node, pod] of await nodeAgents()) {
    const text = await scrape(pod, 8086);
    await checkWithPromtool(text, `node agent ${node} /metrics`);
    agents.set(node, text);
  }
  return { server, agents };
}

function appObjects(node: string): string {
  return `apiVersion: v1
kind: ConfigMap
metadata: { name: settings, namespace: ${APP} }
data: { colour: blue }
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: ${APP}
  annotations: { backup.velero.io/backup-volumes: data }
spec:
  nodeSelector: { kubernetes.io/hostname: ${node} }
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: busybox
      command: [sh, -c, "head -c 3145728 /dev/urandom > /data/blob && exec sleep 100000"]
      volumeMounts: [{ name: data, mountPath: /data }]
  volumes:
    - name: data
      emptyDir: {}
`;
}

describe('Prometheus metrics of the server and the node agents', () => {
  let before: Scrapes;
  let after: Scrapes;
  let workloadNode: string;
  let otherNode: string;
  let doomedBucket: string;

  beforeAll(async () => {
    promtoolPath = await ensureToolBinary('promtool', (l) => process.stderr.write(`[promtool] ${l}\n`));
    const info = clusterInfo();
    kubeconfig = info.kubeconfigPath;
    expect(info.nodes.length).toBeGreaterThanOrEqual(2);
    workloadNode = info.nodes[0]!.name;
    otherNode = info.nodes[1]!.name;
    await namespacesGone([NS, APP]);
    const creds = writeCredentialsFile('cairn-e2e-metrics-');
    const locationConfig = `region=${info.s3.region},s3Url=${info.s3.endpoint},s3ForcePathStyle=true`;
    const installArgs = [
      'install', '-n', NS, '--provider', 'aws', '--bucket', info.s3.bucket, '--prefix', `e2e-metrics-${Date.now()}`, '--secret-file', creds,
      '--backup-location-config', locationConfig, '--use-node-agent', '--image', info.image, '--kubelet-root-dir', info.kubeletRootDir,
    ];
    // The test bed has no Prometheus operator: asking for a ServiceMonitor stops before anything is created.
    const refused = await cairn([...installArgs, '--metrics-service-monitor'], { kubeconfig });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--metrics-service-monitor: the cluster does not serve servicemonitors.monitoring.coreos.com (v1)');
    expect((await kubectl(['get', 'namespace', NS], { allowFailure: true })).exitCode).not.toBe(0);

    const install = await cairn([...installArgs, '--wait', '--timeout', '4m'], { kubeconfig });
    expect(install.exitCode, install.stderr).toBe(0);
    await locationAvailable(run);
    // A location whose bucket will be gone when a backup uploads to it: validated once (Available), never again.
    doomedBucket = `e2e-metrics-doomed-${Date.now()}`;
    await s3Client().send(new CreateBucketCommand({ Bucket: doomedBucket }));
    const created = await run(['backup-location', 'create', DOOMED, '--provider', 'aws', '--bucket', doomedBucket, '--config', locationConfig, '--validation-frequency', '0']);
    expect(created.exitCode, created.stderr).toBe(0);
    await locationAvailable(run, DOOMED);
    await applyWithNamespace(APP, appObjects(workloadNode));
    await waitFor(async () => (await podsOf(undefined, APP)).some((p) => p.status?.phase === 'Running'), { timeoutMs: 120_000, intervalMs: 1000, description: 'pod web Running' });
    await waitFor(async () => (await nodeAgents()).size === info.nodes.length, { timeoutMs: 120_000, intervalMs: 1000, description: 'a Ready node agent on every node' });
  }, 600_000);

  afterAll(async () => {
    await s3Client().send(new DeleteBucketCommand({ Bucket: doomedBucket })).catch(() => undefined);
    await kubectl(['delete', 'namespace', APP, NS, '--ignore-not-found', '--wait=false'], { allowFailure: true });
  });

  it('serves /metrics in the Prometheus text format on the server and every node agent, with the pods annotated for scraping', async () => {
    before = await scrapeAll();
    expect(before.agents.size).toBe(2);
    // Manual backups' series exist from the start, at 0; the default location is Available.
    expect(sample(before.server, 'velero_backup_attempt_total', MANUAL)).toBe(0);
    expect(sample(before.server, 'velero_backup_location_status_gauge', { backup_location_name: 'default' })).toBe(1);
    for (const [node, text] of before.agents) expect(sample(text, 'cairn_pod_volume_backup_success_total', { node }), node).toBe(0);
    const annotations = (selector: string) => podsOf(selector).then((p) => (p[0] as unknown as { metadata: { annotations?: Record<string, string> } }).metadata.annotations ?? {});
    expect(await annotations('deploy=cairn')).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '8085', 'prometheus.io/path': '/metrics' });
    expect(await annotations('name=node-agent')).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '8086', 'prometheus.io/path': '/metrics' });
  }, 300_000);

  it('counts one Completed fs-backup backup and one Failed backup exactly', async () => {
    const ok = await run(['backup', 'create', OK, '--include-namespaces', APP, '--wait']);
    expect(ok.exitCode, `${ok.stdout}\n${ok.stderr}`).toBe(0);
    expect(ok.stdout).toContain('Backup completed with status: Completed.');

    await s3Client().send(new DeleteBucketCommand({ Bucket: doomedBucket }));
    const failed = await run(['backup', 'create', FAILED, '--include-namespaces', APP, '--include-resources', 'configmaps', '--storage-location', DOOMED, '--wait']);
    expect(failed.exitCode).not.toBe(0);
    const failedBackup = JSON.parse((await run(['backup', 'get', FAILED, '-o', 'json'])).stdout) as { status?: { phase?: string; failureReason?: string } };
    expect(failedBackup.status?.phase, failedBackup.status?.failureReason).toBe('Failed');

    after = await scrapeAll();
    const delta = (name: string, labels: Record<string, string> = MANUAL) => (sample(after.server, name, labels) ?? 0) - (sample(before.server, name, labels) ?? 0);
    expect(delta('velero_backup_attempt_total')).toBe(2);
    expect(delta('velero_backup_success_total')).toBe(1);
    expect(delta('velero_backup_failure_total')).toBe(1);
    expect(delta('velero_backup_partial_failure_total')).toBe(0);
    expect(delta('velero_backup_validation_failure_total')).toBe(0);
    expect(delta('velero_backup_duration_seconds_count')).toBe(2);
    expect(delta('velero_backup_total', {})).toBe(2);
    // The failed backup ended last.
    expect(sample(after.server, 'velero_backup_last_status', MANUAL)).toBe(0);
    const okBackup = JSON.parse((await run(['backup', 'get', OK, '-o', 'json'])).stdout) as { status: { completionTimestamp: string; progress?: { totalItems?: number } } };
    expect(sample(after.server, 'velero_backup_last_successful_timestamp', MANUAL)).toBe(Math.floor(Date.parse(okBackup.status.completionTimestamp) / 1000));
    expect(sample(after.server, 'velero_backup_tarball_size_bytes', MANUAL)).toBeGreaterThan(0);

    // The pod volume backup ran on the workload's node: its node agent counted it, the other did not.
    const pvbs = JSON.parse((await kubectl(['get', 'podvolumebackups', '-n', NS, '-l', `velero.io/backup-name=${OK}`, '-o', 'json'])).stdout) as {
      items: { spec: { node: string }; status?: { phase?: string; progress?: { bytesDone?: number } } }[];
    };
    expect(pvbs.items.map((p) => `${p.spec.node}:${p.status?.phase}`)).toEqual([`${workloadNode}:Completed`]);
    const agentDelta = (node: string, name: string, labels: Record<string, string> = { node }) =>
      (sample(after.agents.get(node) ?? '', name, labels) ?? 0) - (sample(before.agents.get(node) ?? '', name, labels) ?? 0);
    expect(agentDelta(workloadNode, 'cairn_pod_volume_backup_success_total')).toBe(1);
    expect(agentDelta(workloadNode, 'podVolume_pod_volume_backup_enqueue_count')).toBe(1);
    expect(agentDelta(workloadNode, 'podVolume_pod_volume_backup_dequeue_count')).toBe(1);
    expect(agentDelta(workloadNode, 'cairn_pod_volume_backup_failure_total')).toBe(0);
    expect(agentDelta(workloadNode, 'cairn_data_path_duration_seconds_count', { node: workloadNode, kind: 'PodVolumeBackup' })).toBe(1);
    expect(agentDelta(workloadNode, 'cairn_data_path_bytes_total', { node: workloadNode, kind: 'PodVolumeBackup' })).toBe(pvbs.items[0]?.status?.progress?.bytesDone);
    expect(pvbs.items[0]?.status?.progress?.bytesDone).toBeGreaterThanOrEqual(3 * 1024 * 1024);
    expect(agentDelta(otherNode, 'cairn_pod_volume_backup_success_total')).toBe(0);
    expect(agentDelta(otherNode, 'podVolume_pod_volume_backup_enqueue_count')).toBe(0);
  }, 300_000);

  it('a restarted server counts nothing again and sets its gauges from the backups that exist', async () => {
    const old = await serverPod();
    await kubectl(['delete', 'pod', '-n', NS, old, '--wait=false']);
    await waitFor(async () => (await podsOf('deploy=cairn')).every((p) => p.metadata.name !== old), { timeoutMs: 120_000, intervalMs: 1000, description: 'the old server pod gone' });
    const text = await scrape(await serverPod(), 8085);
    await checkWithPromtool(text, 'restarted server /metrics');
    expect(sample(text, 'velero_backup_attempt_total', MANUAL)).toBe(0);
    expect(sample(text, 'velero_backup_success_total', MANUAL)).toBe(0);
    expect(sample(text, 'velero_backup_last_status', MANUAL)).toBe(0);
    expect(sample(text, 'velero_backup_last_successful_timestamp', MANUAL)).toBe(sample(after.server, 'velero_backup_last_successful_timestamp', MANUAL));
    expect(sample(text, 'velero_backup_total')).toBe(sample(after.server, 'velero_backup_total'));
  }, 300_000);
});
