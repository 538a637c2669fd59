/**
 * Canceling backups and restores end to end through the CLI on real nodes (kubelet + containerd, MinIO). The node
 * agent caps each backup pod's uploads (ConfigMap `uploadBytesPerSecond`), so an fs-backup of the pod's large volume
 * takes half a minute and "mid-upload" is a state the test can act in:
 *   - `backup cancel` while the large volume uploads: the backup shows Canceling, then ends Canceled within a bound;
 *     the PodVolumeBackup ends Canceled; nothing of the backup is left under `backups/<name>/`; canceling again is
 *     harmless, a finished or unknown backup is refused with its exit code;
 *   - the repository the canceled upload wrote to passes `repo check`, and a new backup of the same volumes Completes
 *     and restores byte for byte;
 *   - `backup delete` of a running backup cancels it, then deletes it;
 *   - `restore cancel` of a restore waiting for its pod volume restores (its pod is kept off every node by a resource
 *     modifier, so its PodVolumeRestores wait): Canceled within a bound, its PodVolumeRestores asked to cancel.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, parseBackup, parseRestore, type Backup, type PodVolumeBackup, type PodVolumeRestore, type Restore } from '../../src/api/index.js';
import type { Kube } from '../../src/kube/client.js';
import { customClient } from '../../src/kube/custom.js';
import { cleanUp, installCairn, kube as makeKube, pvbClient, pvrClient, readyRepository, startWorkload, writeLargeData, writeSampleData } from '../integration/node-agent-support.js';
import { cairn, type CliResult, locationAvailable } from '../support/cli.js';
import { clusterInfo, kubectl, s3Client } from '../support/cluster.js';
import { podVolumeDir } from '../support/node-paths.js';
import { MiB, readTree, withoutTimes, type Tree } from '../support/volume-tree.js';
import { sampleWhile, waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-e2e-cancel-${RUN}`;
const APP = `cancel-app-${RUN}`;
const RESTORED = `cancel-restored-${RUN}`;
const KEPT_OFF = `cancel-kept-off-${RUN}`;
const PREFIX = `e2e-cancel-${RUN}`;
const LARGE_MIB = 96;
/** 96 MiB of random data then takes 24 s to upload: the cancel lands mid-upload on any machine. */
const UPLOAD_BYTES_PER_SECOND = 4 * MiB;
/** How long a cancel may take from the request to Canceled (the data mover stops, the node agent ends its PVB, clean-up). */
const CANCEL_BOUND_MS = 120_000;
const VOLUMES = ['data', 'scratch'] as const;

let k: Kube;
let kubeconfig: string;
let workload: V1Pod;
const expected = new Map<string, Tree>();
const backups = () => customClient<Backup>(k, Kinds.Backup, parseBackup);
const restores = () => customClient<Restore>(k, Kinds.Restore, parseRestore);
const run = (args: string[]): Promise<CliResult> => cairn([...args, '-n', NS], { kubeconfig });

async function pvbsOf(backup: string): Promise<PodVolumeBackup[]> {
  return pvbClient(k).list(NS, `velero.io/backup-name=${backup}`);
}

async function podOf(namespace: string, name: string): Promise<V1Pod> {
  return k.core.readNamespacedPod({ namespace, name });
}

async function storedKeys(prefix: string): Promise<string[]> {
  const res = await s3Client().send(new ListObjectsV2Command({ Bucket: clusterInfo().s3.bucket, Prefix: prefix }));
  return (res.Contents ?? []).map((c) => c.Key ?? '');
}

/** Starts an fs-backup of the app and waits until the large volume's upload is under way; returns that PVB's name. */
async function backupMidUpload(name: string): Promise<string> {
  const create = await run(['backup', 'create', name, '--include-namespaces', APP, '--default-volumes-to-fs-backup']);
  expect(create.exitCode, create.stderr).toBe(0);
  const pvb = await waitFor(
    async () => (await pvbsOf(name)).find((p) => p.status?.phase === 'InProgress' && (p.status.progress?.bytesDone ?? 0) > 0 && (p.status.progress?.totalBytes ?? 0) > LARGE_MIB * MiB * 0.9),
    { timeoutMs: 180_000, intervalMs: 250, description: `the large volume of backup ${name} uploading` },
  );
  expect(pvb.status?.progress?.bytesDone ?? 0).toBeLessThan(pvb.status?.progress?.totalBytes ?? 0);
  return pvb.metadata?.name ?? '';
}

beforeAll(async () => {
  const info = clusterInfo();
  kubeconfig = info.kubeconfigPath;
  k = makeKube();
  await installCairn({ ns: NS, prefix: PREFIX, nodeAgentConfig: { uploadBytesPerSecond: UPLOAD_BYTES_PER_SECOND } });
  await locationAvailable(run);
  await kubectl(['create', 'namespace', APP]);
  workload = await startWorkload(k, { ns: APP, name: 'web', node: info.nodes[0]!.name, withClaim: true });
  writeLargeData(await podVolumeDir(workload, 'scratch'), LARGE_MIB);
  writeSampleData(await podVolumeDir(workload, 'data'));
  for (const v of VOLUMES) expected.set(v, readTree(await podVolumeDir(workload, v)));
  await readyRepository(k, NS, APP);
}, 600_000);

afterAll(async () => {
  if (!k) return;
  for (const r of await restores().list(NS).catch(() => [])) {
    await restores().patch(NS, r.metadata.name ?? '', { metadata: { finalizers: null } }).catch(() => undefined);
  }
  await cleanUp(k, NS, [APP, RESTORED, KEPT_OFF]);
});

describe('canceling backups and restores', () => {
  it('backup cancel mid-upload: Canceling, then Canceled within a bound; its PVB Canceled; nothing left under backups/<name>/', async () => {
    const name = `canceled-${RUN}`;
    const uploading = await backupMidUpload(name);

    const asked = Date.now();
    const cancel = await run(['backup', 'cancel', name, '--confirm']);
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    expect(cancel.stdout).toContain(`Request to cancel backup "${name}" submitted successfully.`);
    const phases: string[] = [];
    const done = waitFor(async () => (await backups().get(NS, name))?.status?.phase === 'Canceled', { timeoutMs: CANCEL_BOUND_MS, intervalMs: 500, description: `backup ${name} Canceled` });
    await sampleWhile(done, 200, async () => {
      const phase = (await backups().get(NS, name))?.status?.phase ?? '';
      if (phases.at(-1) !== phase) phases.push(phase);
    });
    const tookMs = Date.now() - asked;
    process.stderr.write(`[cancel e2e] backup canceled ${tookMs} ms after the request; phases seen: ${phases.join(' → ')}\n`);
    // What `backup get`/`describe` show while the PVBs stop and the clean-up runs.
    expect(phases).toContain('Canceling');
    expect(tookMs).toBeLessThan(CANCEL_BOUND_MS);

    const final = await backups().get(NS, name);
    expect(final?.status?.phase).toBe('Canceled');
    expect(final?.status?.completionTimestamp).toBeTruthy();
    const pvbs = await pvbsOf(name);
    const large = pvbs.find((p) => p.metadata?.name === uploading);
    expect(large?.spec.cancel).toBe(true);
    expect(large?.status?.phase, large?.status?.message).toBe('Canceled');
    expect(pvbs.every((p) => ['Completed', 'Canceled'].includes(p.status?.phase ?? '')), pvbs.map((p) => `${p.metadata?.name}:${p.status?.phase}`).join(' ')).toBe(true);
    expect(await storedKeys(`${PREFIX}/backups/${name}/`)).toEqual([]);

    const get = await run(['backup', 'get', name]);
    expect(get.exitCode, get.stderr).toBe(0);
    expect(get.stdout).toMatch(new RegExp(`^${name}\\s+Canceled\\s`, 'm'));
    const describe = await run(['backup', 'describe', name]);
    expect(describe.exitCode, describe.stderr).toBe(0);
    expect(describe.stdout).toMatch(/^Phase:\s+Canceled$/m);
    const logs = await run(['backup', 'logs', name]);
    expect(logs.exitCode).toBe(4);
    expect(logs.stderr).toBe(`error: backup "${name}" was canceled: its log was deleted with its files\n`);
    // Canceling again is harmless; an unknown name is refused with exit code 4.
    const again = await run(['backup', 'cancel', name, '--confirm']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toBe(`Backup "${name}" is already canceled.\n`);
    const unknown = await run(['backup', 'cancel', `no-such-${RUN}`, '--confirm']);
    expect(unknown.exitCode).toBe(4);
    expect(unknown.stderr).toBe(`error: backup "no-such-${RUN}" not found in namespace "${NS}"\n`);
  }, 420_000);

  it('the repository passes repo check; a new backup of the same volumes Completes and restores byte for byte', async () => {
    const { s3 } = clusterInfo();
    const secret = JSON.parse((await kubectl(['-n', NS, 'get', 'secret', 'velero-repo-credentials', '-o', 'json'])).stdout) as { data: Record<string, string> };
    const passwordFile = join(mkdtempSync(join(tmpdir(), 'cairn-e2e-cancel-')), 'password');
    writeFileSync(passwordFile, Buffer.from(secret.data['repository-password'] ?? '', 'base64'), { mode: 0o600 });
    const url = `s3://${s3.bucket}/${PREFIX}/kopia/${APP}/?endpoint=${encodeURIComponent(s3.endpoint)}&region=${s3.region}&forcePathStyle=true`;
    const check = await cairn(['repo', 'check', '--repo', url, '--password-file', passwordFile, '-o', 'json'], { env: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey } });
    expect(check.exitCode, check.stderr).toBe(0);
    expect((JSON.parse(check.stdout) as { errors: string[] }).errors).toEqual([]);

    const name = `after-cancel-${RUN}`;
    const b = await run(['backup', 'create', name, '--include-namespaces', APP, '--default-volumes-to-fs-backup', '--wait']);
    expect(b.exitCode, `${b.stdout}\n${b.stderr}`).toBe(0);
    expect(b.stdout).toContain('Backup completed with status: Completed.');
    expect((await pvbsOf(name)).map((p) => p.status?.phase)).toEqual(['Completed', 'Completed']);

    // A finished backup cannot be canceled: one line, exit code 2, nothing changed.
    const late = await run(['backup', 'cancel', name, '--confirm']);
    expect(late.exitCode).toBe(2);
    expect(late.stderr).toBe(`error: NAME: backup "${name}" has finished (phase Completed); only a backup that is New or still running can be canceled\n`);
    expect((await backups().get(NS, name))?.metadata.annotations?.['cairn.io/cancel-requested']).toBeUndefined();

    const r = await run(['restore', 'create', `${name}-restore`, '--from-backup', name, '--namespace-mappings', `${APP}:${RESTORED}`, '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('Restore completed with status: Completed.');
    const restored = await podOf(RESTORED, 'web');
    for (const v of VOLUMES) expect(withoutTimes(readTree(await podVolumeDir(restored, v))), v).toEqual(withoutTimes(expected.get(v) ?? {}));
  }, 600_000);

  it('backup delete of a running backup cancels it first, then deletes it', async () => {
    const name = `deleted-running-${RUN}`;
    // New bytes: a backup of the data the previous one stored would find it all in the repository and be over at once.
    writeLargeData(await podVolumeDir(workload, 'scratch'), LARGE_MIB);
    await backupMidUpload(name);
    const del = await run(['backup', 'delete', name, '--confirm']);
    expect(del.exitCode, del.stderr).toBe(0);
    expect(del.stdout).toContain('The backup is still running: it is canceled first');
    await waitFor(async () => (await backups().get(NS, name)) === undefined, { timeoutMs: CANCEL_BOUND_MS + 60_000, intervalMs: 1000, description: `backup ${name} deleted` });
    expect(await storedKeys(`${PREFIX}/backups/${name}/`)).toEqual([]);
    // Its PodVolumeBackups go with it.
    await waitFor(async () => (await pvbsOf(name)).length === 0, { timeoutMs: 60_000, intervalMs: 1000, description: `the PodVolumeBackups of ${name} deleted` });
  }, 420_000);

  it('restore cancel of a restore waiting for its pod volume restores: Canceled within a bound, its PVRs asked to cancel', async () => {
    const backup = `after-cancel-${RUN}`;
    const name = `kept-off-${RUN}`;
    // The restored pod is kept off every node, so its PodVolumeRestores wait (the restore stays WaitingForPluginOperations).
    const modifiers = `version: v1\nresourceModifierRules:\n- conditions:\n    groupResource: pods\n  mergePatches:\n  - patchData: |\n      spec:\n        nodeSelector:\n          kubernetes.io/hostname: no-such-node-${RUN}\n`;
    await kubectl(['-n', NS, 'create', 'configmap', 'keep-off', `--from-literal=modifiers.yaml=${modifiers}`]);
    const create = await run(['restore', 'create', name, '--from-backup', backup, '--namespace-mappings', `${APP}:${KEPT_OFF}`, '--resource-modifier-configmap', 'keep-off']);
    expect(create.exitCode, create.stderr).toBe(0);
    await waitFor(async () => (await restores().get(NS, name))?.status?.phase === 'WaitingForPluginOperations', { timeoutMs: 180_000, intervalMs: 500, description: `restore ${name} waiting for its pod volume restores` });
    expect((await podOf(KEPT_OFF, 'web')).spec?.nodeName).toBeUndefined();

    const asked = Date.now();
    const cancel = await run(['restore', 'cancel', name, '--confirm']);
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    expect(cancel.stdout).toContain(`Request to cancel restore "${name}" submitted successfully.`);
    await waitFor(async () => (await restores().get(NS, name))?.status?.phase === 'Canceled', { timeoutMs: CANCEL_BOUND_MS, intervalMs: 500, description: `restore ${name} Canceled` });
    process.stderr.write(`[cancel e2e] restore canceled ${Date.now() - asked} ms after the request\n`);
    const pvrs: PodVolumeRestore[] = await pvrClient(k).list(NS, `velero.io/restore-name=${name}`);
    expect(pvrs.length).toBe(2);
    expect(pvrs.every((p) => p.spec.cancel === true)).toBe(true);
    const get = await run(['restore', 'get', name]);
    expect(get.stdout).toMatch(new RegExp(`^${name}\\s+\\S+\\s+Canceled\\s`, 'm'));
  }, 420_000);
});
