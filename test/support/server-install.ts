/**
 * The set-up the integration tests share: an installed cairn server over the test bucket, stand-in node agents,
 * objects applied as a list, and the bucket read and cleaned under a prefix. Each helper waits on conditions with
 * deadlines (./wait.ts), never on fixed sleeps.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { expect } from 'vitest';
import { Kinds, parseBackup, type Backup } from '../../src/api/index.js';
import type { Kube } from '../../src/kube/client.js';
import { customClient } from '../../src/kube/custom.js';
import { cairn } from './cli.js';
import { clusterInfo, kubectl, s3Client } from './cluster.js';
import { waitFor } from './wait.js';

/** The image the test bed's nodes run cairn from. */
export const DEV_IMAGE = 'ghcr.io/cairn-backup/cairn:dev';

/** The AWS credentials file of the test MinIO, as `install --secret-file` and the S3 client read it. */
export function credentialsText(): string {
  const { s3 } = clusterInfo();
  return `[default]\naws_access_key_id = ${s3.accessKeyId}\naws_secret_access_key = ${s3.secretAccessKey}\n`;
}

/** Writes credentialsText() into a new temporary directory; returns the file's path. */
export function writeCredentialsFile(prefix = 'cairn-it-'): string {
  const file = join(mkdtempSync(join(tmpdir(), prefix)), 'credentials');
  writeFileSync(file, credentialsText());
  return file;
}

export interface InstallServerOptions {
  namespace: string;
  /** Prefix of the default location in the test bucket. */
  prefix: string;
  /** Further `cairn install` arguments (`--use-node-agent`...). */
  args?: string[];
  /** The credentials file (default: a new one). */
  credentials?: string;
  /** More `key=value` pairs for the location's config (after region, s3Url, s3ForcePathStyle). */
  locationConfig?: string;
}

/**
 * `cairn install` of a server against the test bucket, with a health port of its own (pods share their node's
 * address in the test bed). Returns the credentials file it used. The Deployment may still be rolling out.
 */
export async function installServer(o: InstallServerOptions): Promise<{ credentials: string; healthPort: number }> {
  const info = clusterInfo();
  const credentials = o.credentials ?? writeCredentialsFile();
  const install = await cairn(
    [
      'install', '-n', o.namespace, '--provider', 'aws', '--bucket', info.s3.bucket, '--prefix', o.prefix, '--secret-file', credentials,
      '--backup-location-config', `region=${info.s3.region},s3Url=${info.s3.endpoint},s3ForcePathStyle=true${o.locationConfig ? `,${o.locationConfig}` : ''}`,
      '--image', DEV_IMAGE, ...(o.args ?? []),
    ],
    { kubeconfig: info.kubeconfigPath },
  );
  expect(install.exitCode, install.stderr).toBe(0);
  const healthPort = 20000 + Math.floor(Math.random() * 20000);
  await kubectl([
    '-n', o.namespace, 'patch', 'deployment', 'cairn', '--type=json', '-p',
    JSON.stringify([
      { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: `--health-port=${healthPort}` },
      { op: 'replace', path: '/spec/template/spec/containers/0/ports/0/containerPort', value: healthPort },
    ]),
  ]);
  return { credentials, healthPort };
}

/** Waits until the server Deployment of `namespace` has rolled out. */
export async function serverRolledOut(namespace: string, timeoutSeconds = 180): Promise<void> {
  await kubectl(['-n', namespace, 'rollout', 'status', 'deployment/cairn', `--timeout=${timeoutSeconds}s`], { timeoutMs: (timeoutSeconds + 20) * 1000 });
}

/** The name of the server pod of `namespace` that runs and is not being deleted, if any. */
export async function runningServerPod(namespace: string): Promise<string | undefined> {
  const out = await kubectl(['-n', namespace, 'get', 'pods', '-l', 'deploy=cairn', '-o', 'jsonpath={range .items[?(@.status.phase=="Running")]}{.metadata.name}{" "}{.metadata.deletionTimestamp}{"\\n"}{end}']);
  return out.stdout.split('\n').map((l) => l.trim()).filter((l) => l && !l.includes(' '))[0];
}

/** Deletes the server pod of `namespace` (as a crash or a node drain would) and waits for its successor to roll out. */
export async function restartServer(namespace: string): Promise<void> {
  const before = await runningServerPod(namespace);
  await kubectl(['-n', namespace, 'delete', 'pod', '-l', 'deploy=cairn', '--wait=true'], { timeoutMs: 120_000 });
  await waitFor(async () => {
    const now = await runningServerPod(namespace);
    return now && now !== before ? now : undefined;
  }, { timeoutMs: 150_000, description: 'a new server pod running' });
  await serverRolledOut(namespace);
}

/** The phases a backup ends in. */
export const BACKUP_ENDED = ['Completed', 'PartiallyFailed', 'Failed', 'FailedValidation'];

/** Waits until backup `name` of `namespace` is in one of `phases`; returns it. */
export function backupInPhase(kube: Kube, namespace: string, name: string, phases: readonly string[], timeoutMs = 120_000): Promise<Backup> {
  const backups = customClient<Backup>(kube, Kinds.Backup, parseBackup);
  return waitFor(
    async () => {
      const b = await backups.get(namespace, name);
      return b && phases.includes(b.status?.phase ?? '') ? b : undefined;
    },
    { timeoutMs, description: `backup ${name} in phase ${phases.join('|')}` },
  );
}

/** Applies objects as one `kind: List`. */
export function applyList(items: object[]): Promise<unknown> {
  return kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
}

/** A condition for waitFor: the pod runs. */
export const podRunning = (namespace: string, name: string) => async (): Promise<true | undefined> =>
  (await kubectl(['-n', namespace, 'get', 'pod', name, '-o', 'jsonpath={.status.phase}'], { allowFailure: true })).stdout === 'Running' || undefined;

/**
 * Pods labelled like node-agent pods on the given nodes, so that the server's "a node agent runs on the pod's node"
 * check passes while the test plays the node agent. They are owned by a ConfigMap, so a node-agent DaemonSet does
 * not adopt (and delete) them. Returns their names, in the order of `nodes`.
 */
export async function standInNodeAgents(namespace: string, nodes: readonly string[], name = (node: string, i: number) => `stand-in-node-agent-${i}`): Promise<string[]> {
  await kubectl(['-n', namespace, 'create', 'configmap', 'stand-in-owner']);
  const uid = (await kubectl(['-n', namespace, 'get', 'configmap', 'stand-in-owner', '-o', 'jsonpath={.metadata.uid}'])).stdout.trim();
  const names = nodes.map(name);
  await applyList(
    nodes.map((node, i) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: names[i],
        namespace,
        labels: { name: 'node-agent', role: 'node-agent' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'stand-in-owner', uid, controller: true }],
      },
      spec: {
        nodeName: node,
        restartPolicy: 'Never',
        // The install namespace is Pod Security `restricted` when no node agent is installed: these pods only sleep.
        securityContext: { runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{ name: 'sleep', image: 'busybox', command: ['sleep', '3600'], securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
      },
    })),
  );
  for (const n of names) await waitFor(podRunning(namespace, n), { timeoutMs: 60_000, description: `stand-in node agent ${n} running` });
  return names;
}

const bucket = () => clusterInfo().s3.bucket;

/** Every key in the test bucket under `prefix`. */
export async function listKeys(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const res = await s3Client().send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
    keys.push(...(res.Contents ?? []).map((c) => c.Key ?? ''));
    token = res.NextContinuationToken;
  } while (token);
  return keys;
}

/** An object of the test bucket. */
export async function getObject(key: string): Promise<Buffer> {
  const res = await s3Client().send(new GetObjectCommand({ Bucket: bucket(), Key: key }));
  return Buffer.from(await (res.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
}

/** A gzip'd JSON object of the test bucket, parsed. */
export async function getJsonGz<T = unknown>(key: string): Promise<T> {
  return JSON.parse(gunzipSync(await getObject(key)).toString('utf8')) as T;
}

/** Deletes every key under `prefix` (a test's own corner of the shared bucket). */
export async function deletePrefix(prefix: string): Promise<void> {
  const keys = await listKeys(prefix);
  for (let i = 0; i < keys.length; i += 500) {
    await s3Client().send(new DeleteObjectsCommand({ Bucket: bucket(), Delete: { Objects: keys.slice(i, i + 500).map((Key) => ({ Key })) } }));
  }
}
