/**
 * Object-store outages mid-upload, on the local cluster: MinIO is stopped while a PodVolumeBackup is uploading (the
 * node-agent ConfigMap caps each backup pod's uploads, so "uploading" is a state the test sees rather than a race).
 *
 * - Down for 30 s, within the retry budget: the PVB completes, and a restore of its snapshot into a new pod brings
 *   the same bytes back.
 * - Down for longer than the budget (the ConfigMap's storeRetryTimeout made short, node agent restarted): the PVB
 *   fails, and its message is the last store error, saying how long it was retried.
 * - What that failure left (its repository lock, which it could not delete with the store down; packs it uploaded
 *   but never indexed) is cleared by the next backup (the lock: its pod is gone) and the server's next maintenance
 *   (the packs), after which `repo check` finds nothing to warn about.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, parseBackupRepository, type BackupRepository, type PodVolumeBackup } from '../../src/api/index.js';
import { customClient } from '../../src/kube/custom.js';
import { cairn } from '../support/cli.js';
import type { Kube } from '../../src/kube/client.js';
import { clusterInfo, kubectl, s3Client } from '../support/cluster.js';
import { objectStoreUp, startObjectStore, stopObjectStore } from '../support/minio.js';
import { waitFor } from '../support/wait.js';
import {
  cleanUp,
  expectSameTree,
  installCairn,
  kube as makeKube,
  pvbClient,
  pvbFor,
  pvrClient,
  pvrFor,
  readyRepository,
  startWorkload,
  volumeDirOnNode,
  waitForPhase,
  writeLargeData,
} from './node-agent-support.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-so-${RUN}`;
const APP = `so-app-${RUN}`;
const RESTORED = `so-restored-${RUN}`;
const BACKUP_UID = `00000000-0000-4000-8000-${RUN}${RUN}`;
const LARGE_MIB = 64;
/** 64 MiB then take 16 s to upload: the outage starts a quarter of the way in. */
const UPLOAD_BYTES_PER_SECOND = 4 << 20;
const OUTAGE_MS = 30_000;
const terminal = ['Completed', 'Failed', 'Canceled'];

let k: Kube;
let node: string;
let workload: V1Pod;

function nodeAgentConfig(storeRetryTimeout: string): string {
  return JSON.stringify({ uploadBytesPerSecond: UPLOAD_BYTES_PER_SECOND, storeRetryTimeout });
}

async function backupMidUpload(volume: string, backup: string): Promise<string> {
  const created = await pvbClient(k).create(pvbFor({ ns: NS, backup, backupUID: BACKUP_UID, pod: workload, volume }));
  const name = created.metadata?.name ?? '';
  const uploading = await waitFor(
    async () => {
      const p = await pvbClient(k).get(NS, name);
      if (terminal.includes(p?.status?.phase ?? '')) return p;
      return p?.status?.phase === 'InProgress' && (p.status.progress?.bytesDone ?? 0) >= 8 << 20 ? p : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 200, description: `PVB ${name} uploading` },
  );
  expect(uploading?.status?.phase, uploading?.status?.message).toBe('InProgress');
  expect(uploading?.status?.progress?.bytesDone).toBeLessThan(uploading?.status?.progress?.totalBytes ?? 0);
  return name;
}

const PREFIX = `store-outage-it-${RUN}`;
const repositoryPrefix = `${PREFIX}/kopia/${APP}/`;

/** Keys under the workload namespace's repository (e.g. "locks/"). */
async function repositoryKeys(under: string): Promise<string[]> {
  const client = s3Client();
  try {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const res = await client.send(new ListObjectsV2Command({ Bucket: clusterInfo().s3.bucket, Prefix: repositoryPrefix + under, ...(token ? { ContinuationToken: token } : {}) }));
      for (const o of res.Contents ?? []) out.push(o.Key!.slice(repositoryPrefix.length));
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
    return out;
  } finally {
    client.destroy();
  }
}

/** `cairn repo check` on the workload namespace's repository, as an operator with the bucket keys and password would. */
async function repoCheck(): Promise<{ errors: string[]; warnings: string[] }> {
  const { s3 } = clusterInfo();
  const secret = JSON.parse((await kubectl(['-n', NS, 'get', 'secret', 'velero-repo-credentials', '-o', 'json'])).stdout) as { data: Record<string, string> };
  const dir = mkdtempSync(join(tmpdir(), 'cairn-so-'));
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, Buffer.from(secret.data['repository-password'] ?? '', 'base64'), { mode: 0o600 });
  const url = `s3://${s3.bucket}/${repositoryPrefix}?endpoint=${encodeURIComponent(s3.endpoint)}&region=${s3.region}&forcePathStyle=true`;
  const r = await cairn(['repo', 'check', '--repo', url, '--password-file', passwordFile, '-o', 'json'], {
    env: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
  });
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { errors: string[]; warnings: string[] };
}

const waitDone = (name: string, timeoutMs: number): Promise<PodVolumeBackup> =>
  waitForPhase(() => pvbClient(k).get(NS, name), terminal, { timeoutMs, description: `PVB ${name} finished` });

beforeAll(async () => {
  k = makeKube();
  node = clusterInfo().nodes[0]!.name;
  await installCairn({ ns: NS, prefix: PREFIX, nodeAgentConfig: JSON.parse(nodeAgentConfig('5m')) as object });
  await kubectl(['create', 'namespace', APP]);
  await kubectl(['create', 'namespace', RESTORED]);
  workload = await startWorkload(k, { ns: APP, name: 'web', node, withClaim: true });
  writeLargeData(await volumeDirOnNode(k, workload, 'scratch'), LARGE_MIB);
  writeLargeData(await volumeDirOnNode(k, workload, 'data'), LARGE_MIB);
  await readyRepository(k, NS, APP);
}, 420_000);

afterAll(async () => {
  // Other test files share this MinIO: it is running again whatever happened here.
  if (!(await objectStoreUp())) await startObjectStore();
  if (k) await cleanUp(k, NS, [APP, RESTORED]);
});

describe('object-store outages mid-upload', () => {
  it('rides out MinIO stopped for 30 s: the PVB completes and a restore brings the same bytes back', async () => {
    const name = await backupMidUpload('scratch', `outage-${RUN}`);
    await stopObjectStore();
    const stoppedAt = Date.now();
    try {
      expect(await objectStoreUp()).toBe(false);
      // The PVB keeps going (retrying) while the store is away; it must not fail.
      await waitFor(
        async () => {
          const p = await pvbClient(k).get(NS, name);
          if (p?.status?.phase !== 'InProgress') throw new Error(`PVB left InProgress during the outage: ${p?.status?.phase} ${p?.status?.message ?? ''}`);
          return Date.now() - stoppedAt >= OUTAGE_MS;
        },
        { timeoutMs: OUTAGE_MS + 30_000, intervalMs: 1_000, description: `${OUTAGE_MS / 1000} s of outage with the PVB still InProgress` },
      );
    } finally {
      await startObjectStore();
    }
    const done = await waitDone(name, 240_000);
    expect(done.status?.phase, done.status?.message).toBe('Completed');
    expect(done.status?.progress?.bytesDone).toBeGreaterThanOrEqual(LARGE_MIB << 20);

    const restoreUID = `00000000-0000-4000-9000-${RUN}${RUN}`;
    const target = await startWorkload(k, { ns: RESTORED, name: 'web', node, restoreUID });
    const pvr = await pvrClient(k).create(
      pvrFor({ ns: NS, restore: `restore-${RUN}`, restoreUID, pod: target, volume: 'scratch', snapshotID: done.status?.snapshotID ?? '', sourceNamespace: APP }),
    );
    const restored = await waitForPhase(() => pvrClient(k).get(NS, pvr.metadata?.name ?? ''), terminal, { timeoutMs: 240_000, description: 'PVR finished' });
    expect(restored.status?.phase, restored.status?.message).toBe('Completed');
    const running = await waitFor(
      async () => {
        const pod = await k.core.readNamespacedPod({ namespace: RESTORED, name: 'web' });
        return pod.status?.phase === 'Running' ? pod : undefined;
      },
      { timeoutMs: 90_000, description: 'restored pod Running' },
    );
    expectSameTree(await volumeDirOnNode(k, workload, 'scratch'), await volumeDirOnNode(k, running, 'scratch'), ['.velero']);
  }, 600_000);

  it('fails the PVB with the last store error once the outage outlasts the retry budget', async () => {
    // A short budget: the node agent reads its ConfigMap at start, so it is restarted to take it.
    const configMap = await kubectl(['-n', NS, 'create', 'configmap', 'node-agent-config', `--from-literal=config.json=${nodeAgentConfig('15s')}`, '--dry-run=client', '-o', 'yaml']);
    await kubectl(['apply', '-f', '-'], { input: configMap.stdout });
    await kubectl(['-n', NS, 'rollout', 'restart', 'daemonset/node-agent']);
    await kubectl(['-n', NS, 'rollout', 'status', 'daemonset/node-agent', '--timeout=240s'], { timeoutMs: 250_000 });

    const name = await backupMidUpload('data', `too-long-${RUN}`);
    await stopObjectStore();
    let failed: PodVolumeBackup;
    try {
      failed = await waitDone(name, 180_000);
    } finally {
      await startObjectStore();
    }
    expect(failed.status?.phase).toBe('Failed');
    const message = failed.status?.message ?? '';
    expect(message).toMatch(/^data path backup failed: /);
    expect(message).toMatch(/ECONNREFUSED|ECONNRESET|socket hang up/);
    expect(message).toMatch(/still failing after \d+ attempts over 1[5-9] s/);
    expect(message).not.toContain(clusterInfo().s3.secretAccessKey);
  }, 600_000);

  it('what the failed backup left is cleared: its lock by the next backup, its unindexed packs by maintenance; repo check is clean', async () => {
    // The failed data mover could not delete its lock while the store was down; its pod is gone now.
    const left = await repositoryKeys('locks/');
    expect(left.length).toBeGreaterThan(0);

    writeLargeData(join(await volumeDirOnNode(k, workload, 'data'), 'more'), 8);
    const created = await pvbClient(k).create(pvbFor({ ns: NS, backup: `after-${RUN}`, backupUID: BACKUP_UID, pod: workload, volume: 'data' }));
    const next = await waitDone(created.metadata?.name ?? '', 240_000);
    expect(next.status?.phase, next.status?.message).toBe('Completed');
    expect(await repositoryKeys('locks/')).toEqual([]);

    // Maintenance now, rather than at its weekly time: the server runs it when the frequency says it is due.
    const repos = customClient<BackupRepository>(k, Kinds.BackupRepository, parseBackupRepository);
    const repo = (await repos.list(NS)).find((r) => r.spec.volumeNamespace === APP);
    expect(repo).toBeDefined();
    const asked = new Date();
    await repos.patch(NS, repo!.metadata?.name ?? '', { spec: { maintenanceFrequency: '1s' } });
    const maintained = await waitFor(
      async () => {
        const r = await repos.get(NS, repo!.metadata?.name ?? '');
        return r?.status?.recentMaintenance?.find((m) => Date.parse(m.startTimestamp ?? '') >= asked.getTime() - 1000);
      },
      { timeoutMs: 180_000, intervalMs: 1_000, description: 'a maintenance run after the failed backup' },
    );
    expect(maintained.result, maintained.message).toBe('Succeeded');
    await repos.patch(NS, repo!.metadata?.name ?? '', { spec: { maintenanceFrequency: '168h' } });

    const checked = await repoCheck();
    expect(checked.errors).toEqual([]);
    expect(checked.warnings).toEqual([]);
  }, 600_000);
});
