/**
 * The Helm chart (charts/cairn) with the real Helm: it lints; it renders the same objects `cairn install` creates
 * for the same choices (object by object); wrong values fail at `helm install` with the schema's message; and a
 * release installed with it backs up and restores a workload's volume through file-system backup, then uninstalls
 * and leaves the CRDs (and so every Backup) in place.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { ensureToolBinary } from '../../tools/local-cluster/toolchain.js';
import { applyWithNamespace, clusterInfo, kubectl } from '../support/cluster.js';
import { cairn } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const execFileAsync = promisify(execFile);
const CHART = 'charts/cairn';
/** The image the rendering cases name (nothing runs it). */
const IMAGE = { repository: 'ghcr.io/cairn-backup/cairn', tag: 'dev' };

/** `host:port/repo/name:tag` as the chart's image values. */
function imageValues(reference: string): { repository: string; tag: string } {
  const colon = reference.lastIndexOf(':');
  if (colon <= reference.lastIndexOf('/')) return { repository: reference, tag: 'latest' };
  return { repository: reference.slice(0, colon), tag: reference.slice(colon + 1) };
}

let helmPath: string;
let kubeconfig: string;
let dir: string;

interface HelmResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

async function helm(args: string[]): Promise<HelmResult> {
  try {
    const { stdout, stderr } = await execFileAsync(helmPath, [...args, '--kubeconfig', kubeconfig], { maxBuffer: 64 * 1024 * 1024, timeout: 600_000 });
    return { stdout, stderr, exitCode: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', exitCode: typeof e.code === 'number' ? e.code : 1 };
  }
}

function valuesFile(name: string, values: unknown): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, stringify(values));
  return path;
}

/** Labels only Helm adds; everything else must be what install sets. */
const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/instance'];

function normalise(o: KubernetesObject): KubernetesObject {
  const copy = JSON.parse(JSON.stringify(o)) as KubernetesObject & { spec?: { template?: { metadata?: { labels?: Record<string, string> } } } };
  for (const labels of [copy.metadata?.labels, copy.spec?.template?.metadata?.labels]) {
    for (const l of HELM_LABELS) if (labels) delete labels[l];
  }
  return copy;
}

const key = (o: KubernetesObject) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

async function rendered(namespace: string, values: string): Promise<Map<string, KubernetesObject>> {
  const r = await helm(['template', 'cairn', CHART, '-n', namespace, '--include-crds', '-f', values]);
  expect(r.exitCode, r.stderr).toBe(0);
  const out = new Map<string, KubernetesObject>();
  for (const doc of parseAllDocuments(r.stdout)) {
    const o = doc.toJS() as KubernetesObject | null;
    // The upgrade-CRDs hook is the chart's own way of applying CRDs; install applies them itself.
    if (!o || o.metadata?.annotations?.['helm.sh/hook']) continue;
    out.set(key(o), normalise(o));
  }
  return out;
}

async function installed(args: string[]): Promise<Map<string, KubernetesObject>> {
  const r = await cairn(['install', ...args, '--dry-run', '-o', 'json', '--include-secrets'], { kubeconfig });
  expect(r.exitCode, r.stderr).toBe(0);
  const out = new Map<string, KubernetesObject>();
  // The namespace too: the chart makes it, labelled for Pod Security admission, with createNamespace.
  for (const o of (JSON.parse(r.stdout) as { items: KubernetesObject[] }).items) out.set(key(o), o);
  return out;
}

beforeAll(async () => {
  helmPath = await ensureToolBinary('helm', (l) => process.stderr.write(`[helm] ${l}\n`));
  kubeconfig = clusterInfo().kubeconfigPath;
  dir = mkdtempSync(join(tmpdir(), 'cairn-chart-'));
}, 1_800_000);

describe('the Helm chart', () => {
  it('passes helm lint with its defaults and with a full set of values', async () => {
    const lint = await helm(['lint', CHART]);
    expect(lint.exitCode, lint.stdout + lint.stderr).toBe(0);
    const full = valuesFile('lint-full', {
      image: IMAGE,
      configuration: { backupStorageLocation: [{ name: 'default', provider: 'aws', bucket: 'b', config: { region: 'us-east-1' } }], logLevel: 'debug' },
      credentials: { secretContents: { cloud: '[default]\naws_access_key_id = a\naws_secret_access_key = b\n' } },
      deployNodeAgent: true,
    });
    const lintFull = await helm(['lint', CHART, '-f', full]);
    expect(lintFull.exitCode, lintFull.stdout + lintFull.stderr).toBe(0);
  });

  const cases: { name: string; flags: (creds: string) => string[]; values: (creds: string) => unknown }[] = [
    {
      name: 'S3 with credentials and the node agent',
      flags: (creds) => ['--provider', 'aws', '--bucket', 'backups', '--prefix', 'team-a', '--backup-location-config', 'region=us-east-1,s3Url=http://minio:9000,s3ForcePathStyle=true', '--secret-file', creds, '--use-node-agent', '--node-agent-configmap', 'agent-config'],
      values: (creds) => ({
        configuration: { backupStorageLocation: [{ name: 'default', provider: 'aws', bucket: 'backups', prefix: 'team-a', default: true, config: { region: 'us-east-1', s3Url: 'http://minio:9000', s3ForcePathStyle: 'true' } }] },
        credentials: { secretContents: { cloud: creds } },
        deployNodeAgent: true,
        nodeAgent: { configMap: 'agent-config' },
      }),
    },
    {
      name: 'a privileged node agent',
      flags: () => ['--use-node-agent', '--privileged-node-agent'],
      values: () => ({ deployNodeAgent: true, nodeAgent: { privileged: true } }),
    },
    {
      name: 'a filesystem location, every volume by file-system backup, no node agent',
      flags: () => ['--provider', 'filesystem', '--bucket', 'backups', '--default-volumes-to-fs-backup'],
      values: () => ({ configuration: { backupStorageLocation: [{ name: 'default', provider: 'filesystem', bucket: 'backups', default: true }], defaultVolumesToFsBackup: true } }),
    },
    {
      name: 'S3 with the nodes’ own credentials',
      flags: () => ['--provider', 'aws', '--bucket', 'backups', '--backup-location-config', 'region=eu-west-1', '--no-secret'],
      values: () => ({ configuration: { backupStorageLocation: [{ name: 'default', provider: 'aws', bucket: 'backups', default: true, config: { region: 'eu-west-1' } }] }, credentials: { useSecret: false } }),
    },
    { name: 'no location at all', flags: () => [], values: () => ({}) },
    {
      name: 'plugins (init containers) serving a provider cairn does not build in',
      flags: (creds) => [
        '--provider', 'gcp', '--bucket', 'backups', '--backup-location-config', 'serviceAccount=sa@p.iam', '--secret-file', creds,
        '--plugins', 'velero/velero-plugin-for-gcp:v1.14.2,velero/velero-plugin-for-aws:v1.14.3', '--prefer-plugin', 'velero.io/aws',
      ],
      values: (creds) => ({
        initContainers: ['velero/velero-plugin-for-gcp:v1.14.2', 'velero/velero-plugin-for-aws:v1.14.3'].map((image) => ({
          name: `velero-${image.slice('velero/'.length, image.indexOf(':'))}`,
          image,
          imagePullPolicy: 'IfNotPresent',
          // What install gives plugin init containers: the server pod's restrictions.
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          volumeMounts: [{ name: 'plugins', mountPath: '/target' }],
        })),
        configuration: { backupStorageLocation: [{ name: 'default', provider: 'gcp', bucket: 'backups', default: true, config: { serviceAccount: 'sa@p.iam' } }], preferPlugins: ['velero.io/aws'] },
        credentials: { secretContents: { cloud: creds } },
      }),
    },
    {
      name: 'a narrow restore scope (with one RBAC kind, so bind and escalate stay)',
      flags: () => ['--restore-resources', 'deployments.apps,configmaps,rolebindings.rbac.authorization.k8s.io,Widgets.example.com'],
      values: () => ({ restoreResources: ['deployments.apps', 'configmaps', 'rolebindings.rbac.authorization.k8s.io', 'Widgets.example.com'] }),
    },
    {
      name: 'metrics Services and a ServiceMonitor, with the node agent',
      flags: () => ['--use-node-agent', '--metrics-service-monitor'],
      values: () => ({ deployNodeAgent: true, metrics: { enabled: true, serviceMonitor: { enabled: true } } }),
    },
    {
      name: 'a narrow restore scope without RBAC kinds',
      flags: () => ['--restore-resources', 'pods,services'],
      values: () => ({ restoreResources: ['pods', 'services'] }),
    },
  ];

  for (const c of cases) {
    it(`renders the same objects as cairn install: ${c.name}`, async () => {
      const credsText = '[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = example-secret\n';
      const creds = join(dir, 'credentials');
      writeFileSync(creds, credsText);
      const ns = 'backup-system';
      const image = `${IMAGE.repository}:${IMAGE.tag}`;
      const fromInstall = await installed(['-n', ns, '--image', image, ...c.flags(creds)]);
      const fromChart = await rendered(ns, valuesFile(`case-${cases.indexOf(c)}`, { image: IMAGE, createNamespace: true, ...(c.values(credsText) as object) }));
      expect([...fromChart.keys()].sort()).toEqual([...fromInstall.keys()].sort());
      for (const [k, o] of fromInstall) expect(fromChart.get(k), k).toEqual(o);
    });
  }

  it('refuses wrong values at helm install with the schema’s message, creating nothing', async () => {
    const wrongType = await helm(['template', 'x', CHART, '--set', 'deployNodeAgent=yes']);
    expect(wrongType.exitCode).not.toBe(0);
    expect(wrongType.stderr).toMatch(/deployNodeAgent.*(boolean|type)/i);
    const provider = await helm(['template', 'x', CHART, '-f', valuesFile('bad-provider', { configuration: { backupStorageLocation: [{ name: 'default', provider: 'gcp', bucket: 'b' }] } })]);
    expect(provider.exitCode).not.toBe(0);
    expect(provider.stderr).toMatch(/provider.*(must be one of|enum|value must be)/i);
    // A velero-chart value cairn does not act on is refused, not ignored.
    const unknown = await helm(['template', 'x', CHART, '--set', 'deployRestic=true']);
    expect(unknown.exitCode).not.toBe(0);
    expect(unknown.stderr).toMatch(/deployRestic/);
    const noCreds = await helm(['template', 'x', CHART, '-f', valuesFile('no-creds', { configuration: { backupStorageLocation: [{ name: 'default', provider: 'aws', bucket: 'b' }] } })]);
    expect(noCreds.exitCode).not.toBe(0);
    expect(noCreds.stderr).toContain('credentials: a storage location of provider aws needs credentials.secretContents.cloud or credentials.existingSecret');
    const vsl = await helm(['template', 'x', CHART, '-f', valuesFile('vsl', { configuration: { volumeSnapshotLocation: [{ name: 'default', provider: 'aws' }] } })]);
    expect(vsl.exitCode).not.toBe(0);
    expect(vsl.stderr).toMatch(/volumeSnapshotLocation/);
    const release = await helm(['status', 'x', '-n', 'default']);
    expect(release.exitCode).not.toBe(0);
  });

  it('installs with helm, backs up and restores a volume through it, and uninstalls keeping the CRDs', async () => {
    const info = clusterInfo();
    const ns = 'cairn-helm';
    const app = 'helm-app';
    // The cluster's image of this tree, and the nodes' kubelet root (real nodes keep it elsewhere than the default).
    const values = valuesFile('release', {
      image: { ...imageValues(info.image), pullPolicy: 'IfNotPresent' },
      configuration: {
        backupStorageLocation: [{ name: 'default', provider: 'aws', bucket: info.s3.bucket, prefix: 'helm-e2e', default: true, config: { region: info.s3.region, s3Url: info.s3.endpoint, s3ForcePathStyle: 'true' } }],
      },
      credentials: { secretContents: { cloud: `[default]\naws_access_key_id = ${info.s3.accessKeyId}\naws_secret_access_key = ${info.s3.secretAccessKey}\n` } },
      deployNodeAgent: true,
      nodeAgent: { podVolumePath: `${info.kubeletRootDir}/pods` },
      schedules: { nightly: { schedule: '0 3 * * *', skipImmediately: true, template: { ttl: '240h', includedNamespaces: [app] } }, off: { disabled: true, schedule: '@daily' } },
    });
    const install = await helm(['install', 'cairn', CHART, '-n', ns, '--create-namespace', '-f', values, '--wait', '--timeout', '5m']);
    expect(install.exitCode, install.stderr).toBe(0);
    // No credential in what Helm prints (release notes included).
    expect(install.stdout).not.toContain(info.s3.secretAccessKey);
    const run = (args: string[]) => cairn([...args, '-n', ns], { kubeconfig });
    await waitFor(async () => (await run(['backup-location', 'get', '-o', 'json'])).stdout.includes('"phase": "Available"'), { timeoutMs: 120_000, description: 'the chart’s location Available' });
    // The chart's schedules: a disabled one is not created; the other is taken up by the server.
    await waitFor(async () => (await kubectl(['-n', ns, 'get', 'schedules.velero.io', 'cairn-nightly', '-o', 'jsonpath={.status.phase}'])).stdout === 'Enabled', { timeoutMs: 120_000, description: 'Schedule cairn-nightly Enabled' });
    expect((await kubectl(['-n', ns, 'get', 'schedules.velero.io', '-o', 'name'])).stdout.trim()).toBe('schedule.velero.io/cairn-nightly');

    await applyWithNamespace(app, `apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data, namespace: ${app} }
spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: ${app}
  annotations: { backup.velero.io/backup-volumes: data }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: web
      image: busybox
      command: [sh, -c, "[ -f /data/ready ] || { head -c 3000000 /dev/urandom > /data/blob; mkdir -p /data/notes; for i in 1 2 3; do echo note $i > /data/notes/$i.txt; done; touch /data/ready; }; exec sleep 100000"]
      volumeMounts: [{ name: data, mountPath: /data }]
  volumes: [{ name: data, persistentVolumeClaim: { claimName: data } }]
`);
    const sums = async (): Promise<string> => {
      const r = await kubectl(['-n', app, 'exec', 'web', '-c', 'web', '--', 'sh', '-c', 'cd /data && [ -f ready ] && find . -type f ! -path "./.velero/*" | sort | xargs sha256sum']);
      return r.stdout.trim();
    };
    const before = await waitFor(async () => await sums(), { timeoutMs: 180_000, description: 'the workload’s data written' });

    const backup = await run(['backup', 'create', 'helm-b1', '--include-namespaces', app, '--wait']);
    expect(backup.exitCode, backup.stderr + backup.stdout).toBe(0);
    const described = await run(['backup', 'describe', 'helm-b1', '--details']);
    expect(described.stdout).toMatch(/Phase:\s+Completed/);
    await kubectl(['delete', 'namespace', app, '--wait=true', '--timeout=120s']);
    const restore = await run(['restore', 'create', 'helm-r1', '--from-backup', 'helm-b1', '--wait']);
    expect(restore.exitCode, restore.stderr + restore.stdout).toBe(0);
    const after = await waitFor(async () => await sums(), { timeoutMs: 180_000, description: 'the restored workload running' });
    expect(after).toBe(before);

    const uninstall = await helm(['uninstall', 'cairn', '-n', ns, '--wait', '--timeout', '3m']);
    expect(uninstall.exitCode, uninstall.stderr).toBe(0);
    expect((await kubectl(['-n', ns, 'get', 'deployment', 'cairn'], { allowFailure: true })).exitCode).not.toBe(0);
    // The CRDs stay, and with them the Backup object.
    const backups = await kubectl(['-n', ns, 'get', 'backups.velero.io', 'helm-b1', '-o', 'name']);
    expect(backups.stdout.trim()).toBe('backup.velero.io/helm-b1');
    await kubectl(['delete', 'namespace', app, ns, '--wait=false'], { allowFailure: true });
  });
});
