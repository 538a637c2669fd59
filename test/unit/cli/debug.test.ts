// `cairn debug`: what goes into the bundle and where (a fake cluster), that credential-like values never do, and the
// tar.gz it writes.
import { mkdtempSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import { REDACTED, redactObject, redactText, isSecretKey } from '../../../src/cli/debug/redact.js';
import { collectBundle, configMapArgs, podRole, type DebugSource } from '../../../src/cli/debug/collect.js';
import { defaultBundleName, writeBundle } from '../../../src/cli/debug/bundle.js';
import { NotFoundError, ClusterError } from '../../../src/base/errors.js';
import { readTarGz } from '../server/backup/tar.js';
import Debug from '../../../src/commands/debug.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

const SECRET = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY';

describe('redaction', () => {
  it('tells keys holding a credential from keys naming one', () => {
    for (const k of ['password', 'repoPassword', 'aws_secret_access_key', 'token', 'apiKey', 'access-key', 'Authorization', 'credentials']) expect(isSecretKey(k), k).toBe(true);
    for (const k of ['name', 'secretName', 'credentialsFile', 'tokenPath', 'key', 'region', 'bucket', 'secretKeyRef']) expect(isSecretKey(k), k).toBe(false);
  });

  it('redacts credential-like values in objects at any depth, keeps where credentials are, drops managedFields', () => {
    const bsl = {
      apiVersion: 'velero.io/v1',
      kind: 'BackupStorageLocation',
      metadata: { name: 'default', managedFields: [{ manager: 'kubectl' }], annotations: { note: `s3://minio:${SECRET}@minio.minio:9000` } },
      spec: {
        provider: 'aws',
        credential: { name: 'cloud-credentials', key: 'cloud' },
        config: { region: 'minio', s3Url: `http://admin:${SECRET}@minio:9000`, secretAccessKey: SECRET, token: SECRET },
      },
    };
    const out = redactObject(bsl);
    expect(out.metadata).not.toHaveProperty('managedFields');
    expect(out.spec.credential).toEqual({ name: 'cloud-credentials', key: 'cloud' });
    expect(out.spec.config).toEqual({ region: 'minio', s3Url: `http://admin:${REDACTED}@minio:9000`, secretAccessKey: REDACTED, token: REDACTED });
    expect(out.metadata.annotations.note).toBe(`s3://minio:${REDACTED}@minio.minio:9000`);
    expect(JSON.stringify(out)).not.toContain(SECRET);
    expect(bsl.spec.config.token).toBe(SECRET); // a copy: the input is untouched
  });

  it('redacts environment variables by name, and credentials inside JSON or text kept in strings', () => {
    const deployment = {
      spec: {
        template: {
          spec: {
            containers: [
              {
                env: [
                  { name: 'AWS_SECRET_ACCESS_KEY', value: SECRET },
                  { name: 'REPO_PASSWORD', value: SECRET },
                  { name: 'AWS_REGION', value: 'eu-west-1' },
                  { name: 'AWS_SHARED_CREDENTIALS_FILE', value: '/credentials/cloud' },
                  { name: 'PASSWORD_FROM', valueFrom: { secretKeyRef: { name: 'repo', key: 'password' } } },
                ],
              },
            ],
          },
        },
      },
    };
    const env = redactObject(deployment).spec.template.spec.containers[0]!.env;
    expect(env.map((e) => ('value' in e ? e.value : 'from'))).toEqual([REDACTED, REDACTED, 'eu-west-1', '/credentials/cloud', 'from']);
    const cm = { data: { 'config.json': JSON.stringify({ loadConcurrency: { globalConfig: 2 }, password: SECRET }), 'repo.conf': `user=a\npassword = ${SECRET}\n` } };
    const data = redactObject(cm).data;
    expect(JSON.parse(data['config.json'])).toEqual({ loadConcurrency: { globalConfig: 2 }, password: REDACTED });
    expect(data['repo.conf']).toBe(`user=a\npassword = ${REDACTED}\n`);
  });

  it('redacts log lines: key=value, JSON fields, bearer tokens, URL passwords and PEM private keys', () => {
    const log = [
      `time=1 level=info msg="connecting" token=${SECRET} bucket=velero`,
      `{"level":30,"msg":"x","secretKey":"${SECRET}","backup":"nightly"}`,
      `Authorization: Bearer ${SECRET}`,
      `-----BEGIN RSA PRIVATE KEY-----\n${SECRET}\n-----END RSA PRIVATE KEY-----`,
      'level=info msg="backup completed" backup=nightly',
    ].join('\n');
    const out = redactText(log);
    expect(out).not.toContain(SECRET);
    expect(out).toContain('bucket=velero');
    expect(out).toContain('"backup":"nightly"');
    expect(out).toContain('level=info msg="backup completed" backup=nightly');
  });
});

const pod = (name: string, labels: Record<string, string>, containers: string[], restartCount = 0): V1Pod => ({
  metadata: { name, labels },
  spec: { containers: containers.map((c) => ({ name: c })) },
  status: { containerStatuses: containers.map((c) => ({ name: c, restartCount, ready: true, image: 'i', imageID: 'i', state: { running: {} } })) },
});

function fakeSource(overrides: Partial<DebugSource> = {}): DebugSource & { calls: string[] } {
  const calls: string[] = [];
  const source: DebugSource = {
    clusterVersion: async () => 'v1.34.1',
    serverVersion: async () => '0.1.0',
    listVeleroObjects: async ({ plural }) => {
      calls.push(`list ${plural}`);
      if (plural === 'backupstoragelocations') return [{ apiVersion: 'velero.io/v1', kind: 'BackupStorageLocation', metadata: { name: 'default' }, spec: { config: { secretAccessKey: SECRET } } } as never];
      if (plural === 'backups') return [{ apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name: 'nightly' } }];
      return [];
    },
    workload: async (kind, name) => {
      calls.push(`read ${kind} ${name}`);
      const args = kind === 'Deployment' ? ['server', '--backup-repository-configmap=repo-config'] : ['node-agent', 'server', '--node-agent-configmap', 'node-agent-config'];
      return { apiVersion: 'apps/v1', kind, metadata: { name }, spec: { template: { spec: { containers: [{ name: 'c', args, env: [{ name: 'REPO_PASSWORD', value: SECRET }] }] } } } };
    },
    configMap: async (name) => {
      calls.push(`read ConfigMap ${name}`);
      return name === 'node-agent-config' ? { metadata: { name }, data: { 'node-agent-config.json': '{"loadConcurrency":{"globalConfig":2}}' } } : null;
    },
    pods: async () => [
      pod('cairn-5d8f-abcde', { deploy: 'cairn', 'app.kubernetes.io/part-of': 'cairn' }, ['cairn'], 1),
      pod('node-agent-x1', { name: 'node-agent' }, ['node-agent']),
      pod('nightly-pvb-1', { 'velero.io/pod-volume-backup': 'nightly-pvb-1' }, ['uid-1']),
      pod('du-1', { 'velero.io/data-upload': 'du-1' }, ['uid-2']),
      pod('minio-0', { app: 'minio' }, ['minio']),
    ],
    podLog: async (name, container, previous) => `log of ${name}/${container}${previous ? ' (previous)' : ''} password=${SECRET}\n`,
    describe: async (kind, name) => {
      if (name === 'gone') throw new NotFoundError(`${kind} "${name}" not found in namespace "velero"`);
      return `Name:         ${name}\nPhase:  Completed\n`;
    },
    operationLog: async (kind, name) => Buffer.from(`level=info msg="${kind} ${name} done" token=${SECRET}\n`),
    ...overrides,
  };
  return Object.assign(source, { calls });
}

const baseOpts = {
  namespace: 'velero',
  clientVersion: '0.1.0',
  nodeVersion: '24.0.0',
  clientConfig: { namespace: 'velero', colorized: 'false' },
  clientConfigPath: '/home/u/.config/cairn/config.json',
  resources: [
    { plural: 'backups', version: 'v1' },
    { plural: 'backupstoragelocations', version: 'v1' },
    { plural: 'datauploads', version: 'v2alpha1' },
  ],
};

describe('bundle layout', () => {
  it('classifies pods by the labels install and the exposer put on them', () => {
    expect(podRole(pod('a', { deploy: 'cairn' }, []))).toBe('server');
    expect(podRole(pod('a', { name: 'node-agent' }, []))).toBe('node-agent');
    expect(podRole(pod('a', { 'velero.io/pod-volume-restore': 'x' }, []))).toBe('data-mover');
    expect(podRole(pod('a', { 'velero.io/data-download': 'x' }, []))).toBe('data-mover');
    expect(podRole(pod('a', {}, []))).toBe('other');
  });

  it('finds the ConfigMaps the workloads are started with, in both flag spellings', () => {
    const w = (args: string[]) => ({ spec: { template: { spec: { containers: [{ args }] } } } });
    expect(configMapArgs([w(['--node-agent-configmap', 'b']), w(['--backup-repository-configmap=a', '--uploader-type=kopia', '--repo-maintenance-job-configmap='])])).toEqual(['a', 'b']);
  });

  it('collects everything into its place, with Velero\'s names for the backup and restore files', async () => {
    const steps: string[] = [];
    const source = fakeSource();
    const { entries, problems, missing } = await collectBundle(source, { ...baseOpts, backup: 'nightly', restore: 'nightly-r', onStep: (s) => steps.push(s) });
    expect(entries.map((e) => e.path).sort()).toEqual(
      [
        'backup_describe_nightly.txt',
        'backup_nightly.log',
        'client-config.json',
        'collection.txt',
        'configmaps/node-agent-config.yaml',
        'logs/data-mover/du-1/uid-2.log',
        'logs/data-mover/nightly-pvb-1/uid-1.log',
        'logs/node-agent/node-agent-x1/node-agent.log',
        'logs/other/minio-0/minio.log',
        'logs/server/cairn-5d8f-abcde/cairn.log',
        'logs/server/cairn-5d8f-abcde/cairn.previous.log',
        'resources/backups/nightly.yaml',
        'resources/backupstoragelocations/default.yaml',
        'restore_describe_nightly-r.txt',
        'restore_nightly-r.log',
        'version.txt',
        'workloads/daemonset-node-agent.yaml',
        'workloads/deployment-cairn.yaml',
      ].sort(),
    );
    expect(missing).toEqual([]);
    // The server names repo-config, which does not exist: said, not hidden.
    expect(problems).toEqual(['read ConfigMap repo-config: not found in namespace velero, though the workloads name it']);
    expect(source.calls).not.toContain(expect.stringMatching(/secret/i));
    const text = (p: string) => String(entries.find((e) => e.path === p)?.content);
    expect(text('version.txt')).toBe('Client:\n\tVersion: 0.1.0\n\tNode.js: 24.0.0\nServer:\n\tVersion: 0.1.0\nKubernetes:\n\tVersion: v1.34.1\n');
    expect(text('backup_describe_nightly.txt')).toContain('Name:         nightly');
    expect(text('collection.txt')).toContain('Could not collect:\n  read ConfigMap repo-config');
    for (const e of entries) expect(String(e.content), e.path).not.toContain(SECRET);
    expect(steps.length).toBeGreaterThan(3);
  });

  it('a backup that does not exist is reported missing; a log that cannot be read is a problem, not a failure', async () => {
    const source = fakeSource({ operationLog: async () => Promise.reject(new Error('logs for restore "r" are not available until it has finished')) });
    const { entries, problems, missing } = await collectBundle(source, { ...baseOpts, backup: 'gone', restore: 'r' });
    expect(missing).toEqual(['backup "gone"']);
    expect(entries.map((e) => e.path)).not.toContain('backup_describe_gone.txt');
    expect(entries.map((e) => e.path)).toContain('restore_describe_r.txt');
    expect(problems).toContain('log of restore r: logs for restore "r" are not available until it has finished');
  });

  it('without a cluster: the client\'s version and config and a line saying what could not be collected', async () => {
    const { entries, problems } = await collectBundle({ unreachable: 'cannot reach the cluster at https://10.0.0.1:6443: connection refused' }, baseOpts);
    expect(entries.map((e) => e.path)).toEqual(['client-config.json', 'version.txt', 'collection.txt']);
    expect(problems).toEqual(["cannot reach the cluster at https://10.0.0.1:6443: connection refused: only the client's version and config were collected"]);
    expect(String(entries[2]!.content)).toContain('Could not collect:\n  cannot reach the cluster');
  });

  it('one failing piece does not stop the others', async () => {
    const source = fakeSource({ pods: async () => Promise.reject(new ClusterError('list pods in velero: forbidden: pods is forbidden')), serverVersion: async () => Promise.reject(new Error('timed out waiting for the server to answer')) });
    const { entries, problems } = await collectBundle(source, baseOpts);
    expect(problems).toContain('list pods in velero: forbidden: pods is forbidden');
    expect(problems).toContain('ask the cairn server for its version: timed out waiting for the server to answer');
    expect(String(entries.find((e) => e.path === 'version.txt')?.content)).toContain('<error getting server version: see collection.txt>');
    expect(entries.map((e) => e.path)).toContain('resources/backups/nightly.yaml');
  });
});

describe('bundle file', () => {
  it('is a tar.gz of regular files under cairn-bundle/, written whole or not at all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-debug-'));
    try {
      const file = join(dir, defaultBundleName(new Date(Date.UTC(2025, 9, 1, 10, 0, 5))));
      expect(file.endsWith('bundle-2025-10-01-10-00-05.tar.gz')).toBe(true);
      await writeBundle(file, [{ path: 'version.txt', content: 'Client:\n' }, { path: 'logs/server/p/c.log', content: Buffer.from('line\n') }], new Date());
      const entries = await readTarGz(file);
      expect(entries.map((e) => [e.name, e.type, e.mode, e.body])).toEqual([
        ['cairn-bundle/version.txt', 'file', 0o644, 'Client:\n'],
        ['cairn-bundle/logs/server/p/c.log', 'file', 0o644, 'line\n'],
      ]);
      expect(existsSync(`${file}.partial`)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('cairn debug without a cluster', () => {
  it('writes the client\'s version and config, says what it could not collect, and exits 3', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-debug-'));
    const kubeconfig = join(dir, 'kubeconfig');
    // Port 1 on loopback: refused at once.
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: ${SECRET}}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
    );
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => (out.push(String(c)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => (err.push(String(c)), true));
    try {
      const file = join(dir, 'b.tar.gz');
      await expect(Debug.run(['--kubeconfig', kubeconfig, '--output', file], ROOT)).rejects.toMatchObject({ oclif: { exit: 3 } });
      expect(out.join('')).toBe(`Generated debug information bundle: ${file}\n`);
      expect(err.join('')).toMatch(/^error: cannot reach the cluster at https:\/\/127\.0\.0\.1:1: .*: the bundle holds only the client's version and config\n$/);
      const entries = await readTarGz(file);
      expect(entries.map((e) => e.name)).toEqual(['cairn-bundle/client-config.json', 'cairn-bundle/version.txt', 'cairn-bundle/collection.txt']);
      expect(entries[1]!.body).toMatch(/^Client:\n\tVersion: \d+\.\d+\.\d+/);
      for (const e of entries) expect(e.body).not.toContain(SECRET);
    } finally {
      vi.restoreAllMocks();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
