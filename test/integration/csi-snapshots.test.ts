/**
 * CSI snapshots without data movement, through the installed server and the CLI on the test bed's CSI host-path
 * driver: a backup of a namespace whose claim belongs to the driver takes a VolumeSnapshot, waits for it as an item
 * operation, stores it (VolumeSnapshot, content, class; Velero's three `-csi-*.json.gz` files; the claim annotated)
 * and lets it go from the cluster while the storage snapshot stays; `backup describe --details` lists it; the
 * namespace is deleted and restored, and the claim comes back from the snapshot with the data written before the
 * backup. A claim whose snapshots never become ready (a class whose snapshots the driver refuses) times out after
 * `--csi-snapshot-timeout`: PartiallyFailed with the snapshot's error, the snapshot deleted. `--snapshot-volumes=false`
 * takes none. Deleting the backup deletes the storage snapshot.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backup } from '../../src/api/index.js';
import type { Kube } from '../../src/kube/client.js';
import type { BackupVolumeInfo } from '../../src/api/volume-info.js';
import { readTarGz } from '../unit/server/backup/tar.js';
import { cleanUp, installCairn, kube as newKube } from './node-agent-support.js';
import { cairn } from '../support/cli.js';
import { clusterInfo, kubectl, s3Client } from '../support/cluster.js';
import { enableTestBedCsi } from '../support/test-bed-csi.js';
import { hostpathVolumePath } from '../support/csi-volume.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-csi-${RUN}`;
const APP = `csi-app-${RUN}`;
const BAD = `csi-bad-${RUN}`;
const PREFIX = `csi-it-${RUN}`;
const FAILING_CLASS = `never-ready-${RUN}`;
const FIRST = 'snap-1';
const NEVER_READY = 'snap-never';
const NO_SNAPSHOTS = 'snap-off';
const CONTENT = `written before the backup ${RUN}\n`;

let kube: Kube;
let kubeconfig: string;
let runDir: string;
let handle = '';

const json = async <T>(args: string[]): Promise<T> => JSON.parse((await kubectl([...args, '-o', 'json'])).stdout) as T;
const backupJson = (name: string) => json<Backup>(['-n', NS, 'get', 'backups.velero.io', name]);

async function object(key: string): Promise<Buffer> {
  const res = await s3Client().send(new GetObjectCommand({ Bucket: clusterInfo().s3.bucket, Key: `${PREFIX}/${key}` }));
  return Buffer.from(await (res.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
}
const backupFile = async <T>(name: string, suffix: string): Promise<T> => JSON.parse(gunzipSync(await object(`backups/${name}/${name}${suffix}`)).toString('utf8')) as T;

function applyList(items: object[]): Promise<unknown> {
  return kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
}

function workload(namespace: string, claimAnnotations?: Record<string, string>): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace, ...(claimAnnotations ? { annotations: claimAnnotations } : {}) },
      spec: { storageClassName: 'csi-hostpath-sc', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'app', namespace },
      spec: {
        containers: [{ name: 'app', image: 'busybox', command: ['sh', '-c', 'exec sleep 100000'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      },
    },
  ];
}

/** The host directory of a namespace's `data` claim, once it is bound. */
async function claimDirectory(namespace: string): Promise<string> {
  const pvName = await waitFor(
    async () => (await kubectl(['-n', namespace, 'get', 'pvc', 'data', '-o', 'jsonpath={.spec.volumeName}'], { allowFailure: true })).stdout.trim() || undefined,
    { timeoutMs: 180_000, description: `claim ${namespace}/data bound` },
  );
  const volumeHandle = (await kubectl(['get', 'pv', pvName, '-o', 'jsonpath={.spec.csi.volumeHandle}'])).stdout.trim();
  return hostpathVolumePath(runDir, volumeHandle);
}

const snapshotRecord = (id: string) => join(runDir, 'csi', 'hostpath', 'snapshots', `${id}.json`);

async function volumeSnapshotsIn(namespace: string): Promise<string[]> {
  const out = await kubectl(['-n', namespace, 'get', 'volumesnapshots', '-o', 'jsonpath={.items[*].metadata.name}'], { allowFailure: true });
  return out.stdout.split(/\s+/).filter(Boolean);
}

beforeAll(async () => {
  const info = clusterInfo();
  runDir = info.runDir;
  await enableTestBedCsi(runDir);
  kubeconfig = info.kubeconfigPath;
  kube = newKube();
  await installCairn({ ns: NS, prefix: PREFIX });
  await kubectl(['create', 'namespace', APP]);
  await kubectl(['create', 'namespace', BAD]);
  await applyList([
    {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name: FAILING_CLASS },
      driver: 'hostpath.csi.k8s.io',
      deletionPolicy: 'Delete',
      parameters: { failSnapshot: 'injected snapshot failure' },
    },
    ...workload(APP),
    ...workload(BAD, { 'velero.io/csi-volumesnapshot-class': FAILING_CLASS }),
  ]);
  writeFileSync(join(await claimDirectory(APP), 'hello.txt'), CONTENT);
  await claimDirectory(BAD);
}, 45 * 60_000);

afterAll(async () => {
  if (kube) await cleanUp(kube, NS, [APP, BAD]);
  await kubectl(['delete', 'volumesnapshotclass', FAILING_CLASS, '--ignore-not-found'], { allowFailure: true });
  // The restore's content (deletion policy Retain) is cluster-scoped and outlives the namespace.
  await kubectl(['delete', 'volumesnapshotcontents', '-l', `velero.io/backup-name=${FIRST}`, '--ignore-not-found'], { allowFailure: true });
});

describe('CSI snapshots without data movement', () => {
  it('a backup snapshots the CSI claim, waits for it, stores it and lets it go from the cluster', async () => {
    const r = await cairn(['backup', 'create', FIRST, '-n', NS, '--include-namespaces', APP, '--wait'], { kubeconfig, timeoutMs: 600_000 });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const b = await backupJson(FIRST);
    expect(b.status).toMatchObject({ phase: 'Completed', csiVolumeSnapshotsAttempted: 1, csiVolumeSnapshotsCompleted: 1, backupItemOperationsAttempted: 1, backupItemOperationsCompleted: 1 });

    const info = await backupFile<BackupVolumeInfo[]>(FIRST, '-volumeinfo.json.gz');
    const entry = info.find((v) => v.pvcName === 'data');
    expect(entry).toMatchObject({ pvcNamespace: APP, backupMethod: 'CSISnapshot', snapshotDataMoved: false, preserveLocalSnapshot: true, skipped: false, result: 'succeeded' });
    handle = entry?.csiSnapshotInfo?.snapshotHandle ?? '';
    expect(handle).not.toBe('');
    expect(entry?.csiSnapshotInfo).toMatchObject({ driver: 'hostpath.csi.k8s.io', ReadyToUse: true });
    expect(entry?.csiSnapshotInfo?.operationID).toMatch(new RegExp(`^${APP}/velero-data-[a-z0-9]+/\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`));

    const ops = await backupFile<{ spec: { backupItemAction: string; resourceIdentifier: { Resource: string } }; status: { phase: string } }[]>(FIRST, '-itemoperations.json.gz');
    expect(ops.map((o) => [o.spec.backupItemAction, o.spec.resourceIdentifier.Resource, o.status.phase])).toEqual([['velero.io/csi-volumesnapshot-backupper', 'volumesnapshots', 'Completed']]);

    const snapshots = await backupFile<{ metadata: { name: string; annotations: Record<string, string> }; status: { boundVolumeSnapshotContentName: string } }[]>(FIRST, '-csi-volumesnapshots.json.gz');
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]?.metadata.annotations).toMatchObject({ 'velero.io/csi-volumesnapshot-handle': handle, 'velero.io/csi-driver-name': 'hostpath.csi.k8s.io', 'velero.io/csi-vsc-deletion-policy': 'Delete' });
    const contents = await backupFile<{ metadata: { name: string; labels: Record<string, string> }; spec: { deletionPolicy: string }; status: { snapshotHandle: string } }[]>(FIRST, '-csi-volumesnapshotcontents.json.gz');
    expect(contents).toMatchObject([{ metadata: { labels: { 'velero.io/backup-name': FIRST } }, spec: { deletionPolicy: 'Delete' }, status: { snapshotHandle: handle } }]);
    expect(await backupFile<{ metadata: { name: string } }[]>(FIRST, '-csi-volumesnapshotclasses.json.gz')).toMatchObject([{ metadata: { name: 'csi-hostpath-snapclass' } }]);

    const entries = await readTarGz(await object(`backups/${FIRST}/${FIRST}.tar.gz`));
    const pvc = JSON.parse(entries.find((e) => e.name === `resources/persistentvolumeclaims/namespaces/${APP}/data.json`)?.body ?? '{}') as { metadata: { annotations?: Record<string, string> } };
    expect(pvc.metadata.annotations?.['velero.io/volume-snapshot-name']).toBe(snapshots[0]?.metadata.name);
    expect(entries.some((e) => e.name === `resources/volumesnapshots.snapshot.storage.k8s.io/namespaces/${APP}/${snapshots[0]?.metadata.name}.json`)).toBe(true);
    expect(entries.some((e) => e.name === `resources/volumesnapshotcontents.snapshot.storage.k8s.io/cluster/${contents[0]?.metadata.name}.json`)).toBe(true);

    // The objects left the cluster; the storage's snapshot stayed.
    expect(await volumeSnapshotsIn(APP)).toEqual([]);
    expect((await kubectl(['get', 'volumesnapshotcontent', contents[0]?.metadata.name ?? '', '--ignore-not-found', '-o', 'name'])).stdout.trim()).toBe('');
    expect(existsSync(snapshotRecord(handle))).toBe(true);
  });

  it('backup describe --details lists it under CSI Snapshots', async () => {
    const r = await cairn(['backup', 'describe', FIRST, '-n', NS, '--details'], { kubeconfig });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('CSI Snapshots:');
    expect(r.stdout).toContain(`${APP}/data:`);
    expect(r.stdout).toMatch(new RegExp(`Storage Snapshot ID: ${handle}`));
    expect(r.stdout).toMatch(/CSI Driver: hostpath\.csi\.k8s\.io/);
    expect(r.stdout).toMatch(/Result: succeeded/);
  });

  it('a restore brings the claim back from the snapshot with its data', async () => {
    await kubectl(['delete', 'namespace', APP, '--wait=true', '--timeout=180s'], { timeoutMs: 200_000 });
    const r = await cairn(['restore', 'create', `${FIRST}-r`, '-n', NS, '--from-backup', FIRST, '--wait'], { kubeconfig, timeoutMs: 600_000 });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const pvc = await json<{ spec: { dataSource?: { kind: string; name: string; apiGroup: string } } }>(['-n', APP, 'get', 'pvc', 'data']);
    expect(pvc.spec.dataSource).toMatchObject({ apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot' });
    expect(pvc.spec.dataSource?.name).toMatch(/^[0-9a-f]{64}$/);
    const dir = await claimDirectory(APP);
    await waitFor(async () => (existsSync(join(dir, 'hello.txt')) ? true : undefined), { timeoutMs: 60_000, description: 'restored file' });
    expect(readFileSync(join(dir, 'hello.txt'), 'utf8')).toBe(CONTENT);
    const vsc = await json<{ spec: { deletionPolicy: string; source: { snapshotHandle?: string } } }>(['get', 'volumesnapshotcontent', pvc.spec.dataSource?.name ?? '']);
    expect(vsc.spec).toMatchObject({ deletionPolicy: 'Retain', source: { snapshotHandle: handle } });
  });

  it('a snapshot that never becomes ready times out: PartiallyFailed with its error, and it is deleted', async () => {
    const r = await cairn(['backup', 'create', NEVER_READY, '-n', NS, '--include-namespaces', BAD, '--csi-snapshot-timeout', '20s', '--wait'], { kubeconfig, timeoutMs: 600_000 });
    expect(r.exitCode).not.toBe(0);
    const b = await backupJson(NEVER_READY);
    expect(b.status).toMatchObject({ phase: 'PartiallyFailed', csiVolumeSnapshotsAttempted: 1, csiVolumeSnapshotsCompleted: 0, backupItemOperationsFailed: 1 });
    const results = await backupFile<{ errors: { namespaces?: Record<string, string[]> } }>(NEVER_READY, '-results.gz');
    const errors = results.errors.namespaces?.[BAD] ?? [];
    expect(errors.some((e) => e.includes('was not ready within the CSI snapshot timeout 20s') && e.includes('injected snapshot failure')), errors.join('\n')).toBe(true);
    const info = await backupFile<BackupVolumeInfo[]>(NEVER_READY, '-volumeinfo.json.gz');
    expect(info.find((v) => v.pvcName === 'data')).toMatchObject({ backupMethod: 'CSISnapshot', result: 'failed' });
    await waitFor(async () => ((await volumeSnapshotsIn(BAD)).length === 0 ? true : undefined), { timeoutMs: 60_000, description: 'the never-ready snapshot deleted' });
  });

  it('--snapshot-volumes=false takes no snapshot and says why in the volume info', async () => {
    const r = await cairn(['backup', 'create', NO_SNAPSHOTS, '-n', NS, '--include-namespaces', APP, '--snapshot-volumes=false', '--wait'], { kubeconfig, timeoutMs: 300_000 });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const info = await backupFile<BackupVolumeInfo[]>(NO_SNAPSHOTS, '-volumeinfo.json.gz');
    expect(info.find((v) => v.pvcName === 'data')).toMatchObject({ skipped: true, skippedReason: 'csiSnapshot: the backup has snapshotVolumes set to false;' });
    expect((await backupJson(NO_SNAPSHOTS)).status?.csiVolumeSnapshotsAttempted).toBeUndefined();
  });

  it('deleting the backup deletes its storage snapshot', async () => {
    expect(existsSync(snapshotRecord(handle))).toBe(true);
    const r = await cairn(['backup', 'delete', FIRST, '-n', NS, '--confirm'], { kubeconfig });
    expect(r.exitCode, r.stderr).toBe(0);
    await waitFor(async () => ((await kubectl(['-n', NS, 'get', 'backups.velero.io', FIRST], { allowFailure: true })).exitCode !== 0 ? true : undefined), {
      timeoutMs: 180_000,
      description: 'backup deleted',
    });
    expect(existsSync(snapshotRecord(handle))).toBe(false);
    // The temporary content that deleted it is gone too.
    const left = await kubectl(['get', 'volumesnapshotcontents', '-o', 'jsonpath={.items[*].metadata.name}']);
    expect(left.stdout.split(/\s+/).filter((n) => n.startsWith('vsc-delete-'))).toEqual([]);
  });
});
