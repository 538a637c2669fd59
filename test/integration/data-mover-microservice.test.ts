/**
 * The snapshot data mover (`cairn data-mover backup|restore`) run as local processes against the local cluster and
 * its MinIO, the way the node-agent's backup/restore pod runs it: the test plays the node-agent (creates the
 * DataUpload/DataDownload, sets it InProgress, sets spec.cancel) and the BackupRepository controller (initialises
 * the repository and the credentials Secret), and checks what the node-agent would read: the Events on the CR and
 * the termination message. Block mode is tested with a regular file standing in for the device.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomFillSync } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreV1Event } from '@kubernetes/client-node';
import { DeleteObjectsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import {
  Kinds,
  allCrds,
  crdAsClientModel,
  newBackupStorageLocation,
  newDataDownload,
  newDataUpload,
  parseBackupStorageLocation,
  parseDataDownload,
  parseDataUpload,
  type BackupStorageLocation,
  type DataDownload,
  type DataUpload,
} from '../../src/api/index.js';
import { Repository } from '../../src/datapath/repository.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import { customClient } from '../../src/kube/custom.js';
import { openRepositoryStore } from '../../src/storage/repository-store.js';
import { clusterInfo, kubeConfig, kubectl, s3Client } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-vgdp-${RUN}`;
const PREFIX = `data-mover-it-${RUN}`;
const RUN_JS = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;

let kube: Kube;
let kubeconfig: string;
let location: BackupStorageLocation;
const work = mkdtempSync(join(tmpdir(), 'cairn-vgdp-it-'));

const dus = () => customClient<DataUpload>(kube, Kinds.DataUpload, parseDataUpload);
const dds = () => customClient<DataDownload>(kube, Kinds.DataDownload, parseDataDownload);

interface Mover {
  done: Promise<{ exitCode: number; stderr: string }>;
  termination: string;
}

/** Starts the data mover as the backup/restore pod's container would, writing its termination message to a file. */
function startMover(verb: 'backup' | 'restore', name: string, volumePath: string, volumeMode: 'Filesystem' | 'Block' = 'Filesystem', extra: string[] = []): Mover {
  const termination = join(work, `${name}.termination`);
  const args = [
    RUN_JS, 'data-mover', verb, `--volume-path=${volumePath}`, `--volume-mode=${volumeMode}`, verb === 'backup' ? `--data-upload=${name}` : `--data-download=${name}`,
    '--resource-timeout=1m', '--progress-interval=1s', '--log-level=info', '--log-format=json', `--termination-message-path=${termination}`,
    '-n', NS, '--kubeconfig', kubeconfig, ...extra,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_NAME: 'local-node-1' } });
  const err: Buffer[] = [];
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const done = new Promise<{ exitCode: number; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ exitCode: code ?? 128, stderr: Buffer.concat(err).toString('utf8') }));
  });
  return { done, termination };
}

async function eventsFor(name: string): Promise<CoreV1Event[]> {
  const list = await kube.core.listNamespacedEvent({ namespace: NS, fieldSelector: `involvedObject.name=${name}` });
  return [...list.items].sort((a, b) => Number(a.metadata?.resourceVersion ?? 0) - Number(b.metadata?.resourceVersion ?? 0));
}

/** The Events once Data-Path-Stopped is among them (the last one the data mover records). */
async function eventsWhenStopped(name: string): Promise<CoreV1Event[]> {
  return waitFor(async () => {
    const ev = await eventsFor(name);
    return ev.some((e) => e.reason === 'Data-Path-Stopped') ? ev : undefined;
  }, { timeoutMs: 10_000, description: `Data-Path-Stopped event on ${name}` });
}

const withoutProgress = (events: CoreV1Event[]) => events.map((e) => e.reason).filter((r) => r !== 'Data-Path-Progress');

async function setInProgress(kind: 'du' | 'dd', name: string): Promise<void> {
  const startTimestamp = new Date().toISOString();
  if (kind === 'du') await dus().updateStatus(NS, name, (o) => void (o.status = { ...(o.status ?? {}), phase: 'InProgress', startTimestamp }));
  else await dds().updateStatus(NS, name, (o) => void (o.status = { ...(o.status ?? {}), phase: 'InProgress', startTimestamp }));
}

function duFor(name: string, sourcePVC: string): DataUpload {
  return newDataUpload({
    namespace: NS,
    name,
    labels: { 'velero.io/backup-name': `backup-${RUN}`, 'velero.io/async-operation-id': `du-${name}` },
    spec: {
      snapshotType: 'CSI',
      csiSnapshot: { volumeSnapshot: `snap-${name}`, storageClass: 'csi-hostpath-sc', snapshotClass: 'csi-hostpath-snapclass' },
      sourcePVC,
      backupStorageLocation: 'default',
      sourceNamespace: 'app',
      operationTimeout: '10m0s',
    },
  });
}

function ddFor(name: string, snapshotID: string): DataDownload {
  return newDataDownload({
    namespace: NS,
    name,
    labels: { 'velero.io/restore-name': `restore-${RUN}` },
    spec: {
      targetVolume: { pvc: 'data-web-0', pv: '', namespace: 'app-restored' },
      backupStorageLocation: 'default',
      snapshotID,
      sourceNamespace: 'app',
      operationTimeout: '10m0s',
    },
  });
}

function writeSampleVolume(dir: string): void {
  mkdirSync(join(dir, 'sub'), { recursive: true });
  writeFileSync(join(dir, 'hello.txt'), 'hello from the snapshot data mover\n');
  writeFileSync(join(dir, 'random.bin'), randomFillSync(Buffer.alloc(5 << 20)));
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, 'sub', `small-${i}.txt`), `file ${i}\n`.repeat(i + 1));
  writeFileSync(join(dir, 'sub', 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o750 });
  symlinkSync('../hello.txt', join(dir, 'sub', 'link'));
}

function compareTrees(a: string, b: string): void {
  const names = readdirSync(a).sort();
  expect(readdirSync(b).sort()).toEqual(names);
  for (const n of names) {
    const sa = lstatSync(join(a, n));
    const sb = lstatSync(join(b, n));
    expect(sb.mode, n).toBe(sa.mode);
    if (sa.isDirectory()) compareTrees(join(a, n), join(b, n));
    else if (sa.isSymbolicLink()) expect(readlinkSync(join(b, n))).toBe(readlinkSync(join(a, n)));
    else expect(readFileSync(join(b, n)).equals(readFileSync(join(a, n))), `${n} bytes`).toBe(true);
  }
}

async function openRepo(): Promise<Repository> {
  return Repository.open({ store: await openRepositoryStore({ location, volumeNamespace: 'app', kube }), password: PASSWORD });
}

beforeAll(async () => {
  const info = clusterInfo();
  kubeconfig = info.kubeconfigPath;
  kube = kubeFromConfig(kubeConfig());
  for (const crd of allCrds()) {
    try {
      await kube.apiext.createCustomResourceDefinition({ body: crdAsClientModel(structuredClone(crd)) });
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
  for (const plural of ['datauploads', 'datadownloads', 'backupstoragelocations']) {
    await waitFor(async () => {
      const crd = await kube.apiext.readCustomResourceDefinition({ name: `${plural}.velero.io` });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, { timeoutMs: 30_000, description: `CRD ${plural} established` });
  }
  await kubectl(['create', 'namespace', NS]);
  const credentials = `[default]\naws_access_key_id = ${info.s3.accessKeyId}\naws_secret_access_key = ${info.s3.secretAccessKey}\n`;
  await kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: NS }, stringData: { cloud: credentials } },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'velero-repo-credentials', namespace: NS }, stringData: { 'repository-password': PASSWORD } },
      ],
    }),
  });
  location = await customClient<BackupStorageLocation>(kube, Kinds.BackupStorageLocation, parseBackupStorageLocation).create(
    newBackupStorageLocation({
      namespace: NS,
      name: 'default',
      spec: {
        provider: 'aws',
        objectStorage: { bucket: info.s3.bucket, prefix: PREFIX },
        credential: { name: 'creds', key: 'cloud' },
        config: { region: info.s3.region, s3Url: info.s3.endpoint, s3ForcePathStyle: 'true' },
      },
    }),
  );
  // What the BackupRepository controller does before any DataUpload of namespace "app" runs.
  await Repository.init({ store: await openRepositoryStore({ location, volumeNamespace: 'app', kube }), password: PASSWORD, kdf: { N: 1024, r: 8, p: 1 } });
}, 120_000);

afterAll(async () => {
  await kubectl(['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
  const s3 = s3Client();
  for (;;) {
    const res = await s3.send(new ListObjectsV2Command({ Bucket: clusterInfo().s3.bucket, Prefix: `${PREFIX}/` }));
    const keys = (res.Contents ?? []).map((c) => ({ Key: c.Key ?? '' }));
    if (keys.length === 0) break;
    await s3.send(new DeleteObjectsCommand({ Bucket: clusterInfo().s3.bucket, Delete: { Objects: keys } }));
  }
  rmSync(work, { recursive: true, force: true });
});

describe('data-mover backup and restore (Filesystem)', () => {
  const source = join(work, 'source');
  let snapshotID = '';

  it('waits for InProgress, backs up the volume, reports Completed with the snapshot ID and leaves status alone', async () => {
    mkdirSync(source);
    writeSampleVolume(source);
    const name = `du-${RUN}-1`;
    await dus().create(duFor(name, 'data-web-0'));
    const mover = startMover('backup', name, source);
    await waitFor(async () => (await dus().get(NS, name)) !== undefined, { timeoutMs: 10_000, description: 'DataUpload exists' });
    expect((await eventsFor(name)).map((e) => e.reason)).toEqual([]);
    await setInProgress('du', name);
    const { exitCode, stderr } = await mover.done;
    expect(exitCode, stderr).toBe(0);

    const termination = readFileSync(mover.termination, 'utf8');
    const result = JSON.parse(termination) as { snapshotID: string; emptySnapshot: boolean; source: unknown; totalBytes: number };
    expect(result.snapshotID).toMatch(/^[0-9a-f]{16,}$/);
    expect(result).toMatchObject({ emptySnapshot: false, source: { byPath: source, volumeMode: 'Filesystem' } });
    expect(result.totalBytes).toBeGreaterThan(5 << 20);
    snapshotID = result.snapshotID;

    const events = await eventsWhenStopped(name);
    expect(withoutProgress(events)).toEqual(['Data-Path-Started', 'Data-Path-Completed', 'Data-Path-Stopped']);
    const byReason = (r: string) => events.find((e) => e.reason === r)!;
    expect(byReason('Data-Path-Started').message).toBe(`Data path for ${name} started`);
    expect(byReason('Data-Path-Completed').message).toBe(termination);
    expect(JSON.parse(byReason('Data-Path-Progress').message ?? '')).toEqual({ totalBytes: result.totalBytes, doneBytes: result.totalBytes });
    for (const e of events) {
      expect(e.involvedObject.kind).toBe('DataUpload');
      expect(e.involvedObject.apiVersion).toBe('velero.io/v2alpha1');
      expect(e.source?.component).toBe(name);
      expect(e.source?.host).toBe('local-node-1');
      expect(e.message).not.toContain(PASSWORD);
    }
    expect(stderr).not.toContain(PASSWORD);
    expect((await dus().get(NS, name))?.status?.phase).toBe('InProgress');
    const snap = await (await openRepo()).loadSnapshot(snapshotID);
    expect(snap.tags).toMatchObject({
      'velero.io/async-operation-id': `du-${name}`,
      'snapshot-requester': 'snapshot-data-upload-download',
      'snapshot-real-source': 'app/data-web-0',
      'volume-mode': 'Filesystem',
    });
  }, 120_000);

  it('the next backup of the same source PVC is incremental: its parent is the previous snapshot', async () => {
    writeFileSync(join(source, 'new.txt'), 'added after the first backup\n');
    const name = `du-${RUN}-2`;
    await dus().create(duFor(name, 'data-web-0'));
    const mover = startMover('backup', name, source);
    await setInProgress('du', name);
    const { exitCode, stderr } = await mover.done;
    expect(exitCode, stderr).toBe(0);
    const second = JSON.parse(readFileSync(mover.termination, 'utf8')) as { snapshotID: string };
    const snap = await (await openRepo()).loadSnapshot(second.snapshotID);
    expect(snap.parent).toBe(snapshotID);
    expect(snap.summary.reusedBytes).toBeGreaterThan(5 << 20);
    snapshotID = second.snapshotID;
  }, 120_000);

  it('restores spec.snapshotID into the volume byte for byte', async () => {
    const target = join(work, 'restored');
    mkdirSync(target);
    const name = `dd-${RUN}-1`;
    await dds().create(ddFor(name, snapshotID));
    const mover = startMover('restore', name, target);
    await setInProgress('dd', name);
    const { exitCode, stderr } = await mover.done;
    expect(exitCode, stderr).toBe(0);
    expect(JSON.parse(readFileSync(mover.termination, 'utf8'))).toMatchObject({ target: { byPath: target, volumeMode: 'Filesystem' } });
    const events = await eventsWhenStopped(name);
    expect(withoutProgress(events)).toEqual(['Data-Path-Started', 'Data-Path-Completed', 'Data-Path-Stopped']);
    expect(events.every((e) => e.involvedObject.kind === 'DataDownload')).toBe(true);
    compareTrees(source, target);
  }, 120_000);

  it('spec.cancel stops a running backup: Data-Path-Canceling, Data-Path-Canceled, exit 1 and "data path is canceled"', async () => {
    const big = join(work, 'big');
    mkdirSync(big);
    const chunk = Buffer.alloc(32 << 20);
    // 128 MiB under a 16 MiB/s upload cap: the backup runs for 8 s on any machine, so the cancel finds it running.
    for (let i = 0; i < 4; i++) writeFileSync(join(big, `part-${i}.bin`), randomFillSync(chunk));
    const name = `du-${RUN}-cancel`;
    await dus().create(duFor(name, 'big'));
    const mover = startMover('backup', name, big, 'Filesystem', ['--upload-bytes-per-second=16777216']);
    await setInProgress('du', name);
    await waitFor(async () => (await eventsFor(name)).some((e) => e.reason === 'Data-Path-Started'), { timeoutMs: 30_000, description: 'Data-Path-Started' });
    await dus().patch(NS, name, { spec: { cancel: true } });
    const { exitCode } = await mover.done;
    expect(exitCode).toBe(1);
    expect(readFileSync(mover.termination, 'utf8')).toBe(`Failed to run data path service for DataUpload ${name}: data path is canceled`);
    const events = await eventsWhenStopped(name);
    expect(withoutProgress(events)).toEqual(['Data-Path-Started', 'Data-Path-Canceling', 'Data-Path-Canceled', 'Data-Path-Stopped']);
    expect(events.find((e) => e.reason === 'Data-Path-Canceling')?.message).toBe(`Canceling for data upload ${name}`);
    expect(events.find((e) => e.reason === 'Data-Path-Canceled')?.message).toBe(`Data path for data upload ${name} canceled`);
  }, 180_000);
});

describe('data-mover backup and restore (Block, a file standing in for the device)', () => {
  it('backs up the device as one stream and restores it byte for byte over stale contents', async () => {
    const device = join(work, 'device.img');
    const image = Buffer.alloc((6 << 20) + 4096);
    randomFillSync(image, 0, 2 << 20);
    randomFillSync(image, 4 << 20); // a zero run in the middle, as unused space on a device
    writeFileSync(device, image);
    const up = `du-${RUN}-block`;
    await dus().create(duFor(up, 'raw-web-0'));
    const backup = startMover('backup', up, device, 'Block');
    await setInProgress('du', up);
    const b = await backup.done;
    expect(b.exitCode, b.stderr).toBe(0);
    const result = JSON.parse(readFileSync(backup.termination, 'utf8')) as { snapshotID: string; totalBytes: number };
    expect(result).toMatchObject({ emptySnapshot: false, source: { byPath: device, volumeMode: 'Block' }, totalBytes: image.length });
    expect(withoutProgress(await eventsWhenStopped(up))).toEqual(['Data-Path-Started', 'Data-Path-Completed', 'Data-Path-Stopped']);

    const target = join(work, 'target.img');
    writeFileSync(target, Buffer.alloc(image.length, 0x5a));
    const down = `dd-${RUN}-block`;
    await dds().create(ddFor(down, result.snapshotID));
    const restore = startMover('restore', down, target, 'Block');
    await setInProgress('dd', down);
    const r = await restore.done;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(restore.termination, 'utf8'))).toEqual({ target: { byPath: target, volumeMode: 'Block' }, totalBytes: image.length });
    expect(readFileSync(target).equals(image)).toBe(true);
  }, 180_000);

  it('a directory given as a Block volume fails at init with a clear message', async () => {
    const name = `du-${RUN}-notblock`;
    await dus().create(duFor(name, 'raw-web-1'));
    const mover = startMover('backup', name, work, 'Block');
    await setInProgress('du', name);
    const { exitCode } = await mover.done;
    expect(exitCode).toBe(1);
    expect(readFileSync(mover.termination, 'utf8')).toBe(`Failed to init data path service for DataUpload ${name}: volume path ${work} is not a block device`);
    expect(withoutProgress(await eventsWhenStopped(name))).toEqual(['Data-Path-Failed', 'Data-Path-Stopped']);
  }, 60_000);
});
