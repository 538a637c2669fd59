// The real Velero server (v1.17, the `velero` binary built by tools/peers/install-velero.sh) run as a process of this
// machine beside cairn's, in a namespace of its own, on the same cluster and MinIO: its own backup location
// (prefix `velero-scale`), the AWS object-store plugin the test bed builds, no node agent.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import type { ClusterState } from '../../tools/local-cluster/state.js';
import { freePort, type ClusterHarness, must } from '../cluster/harness.js';

export interface VeleroServer {
  readonly pid: number;
  stop(): Promise<void>;
}

export async function startVeleroServer(opts: { velero: string; awsPlugin: string; state: ClusterState; h: ClusterHarness; namespace: string; prefix: string; scratch: string }): Promise<VeleroServer> {
  const { state, h, namespace } = opts;
  const pluginDir = join(opts.scratch, 'velero-plugins');
  mkdirSync(pluginDir, { recursive: true });
  symlinkSync(opts.awsPlugin, join(pluginDir, 'velero-plugin-for-aws'));
  const creds = join(opts.scratch, 'velero-credentials');
  writeFileSync(creds, `[default]\naws_access_key_id = ${state.s3.accessKeyId}\naws_secret_access_key = ${state.s3.secretAccessKey}\n`, { mode: 0o600 });
  await h.kubectl(['create', 'namespace', namespace]);
  const location = {
    apiVersion: 'velero.io/v1',
    kind: 'BackupStorageLocation',
    metadata: { name: 'default', namespace },
    spec: { provider: 'aws', default: true, objectStorage: { bucket: state.s3.bucket, prefix: opts.prefix }, config: { region: state.s3.region, s3Url: state.s3.endpoint, s3ForcePathStyle: 'true' } },
  };
  must('create the Velero location', await h.kubectl(['apply', '-f', '-'], JSON.stringify(location)));
  // Velero's restore reads its own Deployment (the image its restore helper runs) and fails the whole restore without
  // one; the server runs here as a process, so a Deployment of no replicas stands in for it.
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'velero', namespace },
    spec: { replicas: 0, selector: { matchLabels: { deploy: 'velero' } }, template: { metadata: { labels: { deploy: 'velero' } }, spec: { containers: [{ name: 'velero', image: 'velero/velero:v1.17.2' }] } } },
  };
  must('create the Velero Deployment', await h.kubectl(['apply', '-f', '-'], JSON.stringify(deployment)));
  const metrics = await freePort('127.0.0.1');
  const profiler = await freePort('127.0.0.1');
  const log = createWriteStream(join(opts.scratch, 'velero-server.log'));
  const child: ChildProcess = spawn(
    opts.velero,
    ['server', '--namespace', namespace, '--kubeconfig', state.kubeconfigPath, '--plugin-dir', pluginDir, '--metrics-address', `127.0.0.1:${metrics}`, '--profiler-address', `127.0.0.1:${profiler}`],
    { env: { ...process.env, AWS_SHARED_CREDENTIALS_FILE: creds, VELERO_NAMESPACE: namespace }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.pid === undefined) throw new Error(`the Velero server did not start (${opts.velero})`);
  await h.waitFor('the Velero location Available', async () => {
    const bsl = await h.json<{ status?: { phase?: string } }>(['get', 'backupstoragelocation', 'default', '-n', namespace]);
    return bsl.status?.phase === 'Available';
  });
  return {
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
