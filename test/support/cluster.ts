/**
 * Test-side access to the local cluster the global setup started: connection info, a kubectl runner, a
 * client-node KubeConfig and an S3 client for the test bucket. Use waitFor (./wait.ts) to wait for states.
 */
import { spawn } from 'node:child_process';
import { S3Client } from '@aws-sdk/client-s3';
import { KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import type { ClusterInfo } from './cluster-info.js';
import { waitFor } from './wait.js';

export type { ClusterInfo } from './cluster-info.js';

export function clusterInfo(): ClusterInfo {
  const info = inject('cairnCluster');
  if (!info) throw new Error('no local cluster: cluster tests run in the vitest project "cluster" (test/support/global-setup.ts)');
  return info;
}

export interface KubectlOptions {
  /** Written to kubectl's stdin (for `apply -f -`). */
  input?: string;
  /** Return a non-zero exit instead of throwing. */
  allowFailure?: boolean;
  timeoutMs?: number;
}

export interface KubectlResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Runs kubectl against the local cluster as cluster admin; throws with stderr if it fails. */
export function kubectl(args: string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  const info = clusterInfo();
  const fullArgs = ['--kubeconfig', info.kubeconfigPath, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(info.kubectlPath, fullArgs, { stdio: ['pipe', 'pipe', 'pipe'], timeout: opts.timeoutMs ?? 60_000 });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const result = { stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), exitCode: code ?? 128 };
      if (result.exitCode !== 0 && !opts.allowFailure) {
        reject(new Error(`kubectl ${args.join(' ')} failed (${signal ?? `exit ${result.exitCode}`}): ${result.stderr.trim()}`));
      } else {
        resolve(result);
      }
    });
    // A program that exits without reading its input makes this write fail with EPIPE; its exit code and stderr
    // already say what happened, so the write error is not a second failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

/** A client-node configuration for the local cluster's admin. */
export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(clusterInfo().kubeconfigPath);
  return kc;
}

/** An S3 client for the local MinIO (path-style, the test bucket is `clusterInfo().s3.bucket`). */
export function s3Client(): S3Client {
  const { s3 } = clusterInfo();
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
}

/** `kubectl <args> -o json` parsed, or undefined when kubectl fails (e.g. the object does not exist). */
export async function kubectlJson<T>(args: string[]): Promise<T | undefined> {
  const r = await kubectl([...args, '-o', 'json'], { allowFailure: true });
  return r.exitCode === 0 ? (JSON.parse(r.stdout) as T) : undefined;
}

/** Waits until none of `namespaces` exists any more (an earlier run's, still terminating). */
export async function namespacesGone(namespaces: readonly string[], timeoutMs = 240_000): Promise<void> {
  await waitFor(async () => (await kubectl(['get', 'namespace', ...namespaces], { allowFailure: true })).stdout.trim() === '', {
    timeoutMs,
    intervalMs: 1000,
    description: 'namespaces of an earlier run gone',
  });
}

/**
 * Applies `objects` (YAML documents) together with the Namespace `namespace` they live in, which comes first so that
 * they can land in it.
 */
export function applyWithNamespace(namespace: string, objects: string, o: { labels?: Record<string, string> } = {}): Promise<KubectlResult> {
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, ...(o.labels ? { labels: o.labels } : {}) } };
  return kubectl(['apply', '-f', '-'], { input: `${JSON.stringify(ns)}\n---\n${objects}` });
}

/** Deletes `namespace` and waits until it is gone (its objects deleted, its volumes' claims with it). */
export async function deleteNamespace(namespace: string, timeoutMs: number): Promise<void> {
  await kubectl(['delete', 'namespace', namespace, '--wait=false']);
  await waitFor(async () => (await kubectl(['get', 'namespace', namespace], { allowFailure: true })).exitCode !== 0, {
    timeoutMs,
    intervalMs: 1000,
    description: `namespace ${namespace} deleted`,
  });
}

/**
 * Drops the finalizers of the `kinds` (plural resource names) in `namespace`. Restores (and the data movers' CRs)
 * carry finalizers that only a running server or node agent removes; with the server gone along with its namespace
 * nobody would, and the namespace would never finish terminating. A finished object no longer needs its finalizer.
 */
export async function dropFinalizers(namespace: string, kinds: readonly string[] = ['restores']): Promise<void> {
  for (const kind of kinds) {
    const names = await kubectl(['get', kind, '-n', namespace, '-o', 'name'], { allowFailure: true });
    for (const r of names.stdout.split('\n').filter(Boolean)) {
      await kubectl(['patch', r, '-n', namespace, '--type', 'merge', '-p', '{"metadata":{"finalizers":null}}'], { allowFailure: true });
    }
  }
}
