/**
 * The in-pod data mover (`cairn pod-volume backup|restore`) and `cairn restore-helper`, run as local processes
 * against the local cluster and its MinIO, the way the node-agent's data-mover pod runs them: the test plays the
 * node-agent (creates the PVB/PVR, sets it InProgress, sets spec.cancel) and the BackupRepository controller
 * (initialises the repository and the credentials Secret), and checks what the node-agent would read: the Events
 * on the CR and the termination message.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomFillSync } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
  newPodVolumeBackup,
  newPodVolumeRestore,
  parseBackupStorageLocation,
  parsePodVolumeBackup,
  parsePodVolumeRestore,
  type BackupStorageLocation,
  type PodVolumeBackup,
  type PodVolumeRestore,
} from '../../src/api/index.js';
import { Repository } from '../../src/datapath/repository.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import { customClient } from '../../src/kube/custom.js';
import { openRepositoryStore } from '../../src/storage/repository-store.js';
import { cairn } from '../support/cli.js';
import { clusterInfo, kubeConfig, kubectl, s3Client } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-dm-${RUN}`;
const PREFIX = `microservice-it-${RUN}`;
const RUN_JS = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;

let kube: Kube;
let kubeconfig: string;
let location: BackupStorageLocation;
const work = mkdtempSync(join(tmpdir(), 'cairn-dm-it-'));

const pvbs = () => customClient<PodVolumeBackup>(kube, Kinds.PodVolumeBackup, parsePodVolumeBackup);
const pvrs = () => customClient<PodVolumeRestore>(kube, Kinds.PodVolumeRestore, parsePodVolumeRestore);

interface Mover {
  done: Promise<{ exitCode: number; stderr: string }>;
  termination: string;
}

/** Starts the data mover as the data-mover pod's container would, writing its termination message to a file. */
function startMover(verb: 'backup' | 'restore', name: string, volumePath: string, extra: string[] = []): Mover {
  const termination = join(work, `${name}.termination`);
  const args = [
    RUN_JS, 'pod-volume', verb, `--volume-path=${volumePath}`, verb === 'backup' ? `--pod-volume-backup=${name}` : `--pod-volume-restore=${name}`,
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
  // Creation timestamps have one-second resolution; the order of creation is the resourceVersion order (the order a
  // watcher sees them in).
  return [...list.items].sort((a, b) => Number(a.metadata?.resourceVersion ?? 0) - Number(b.metadata?.resourceVersion ?? 0));
}

async function reasonsFor(name: string): Promise<string[]> {
  return (await eventsFor(name)).map((e) => e.reason ?? '');
}

async function setPhase(kind: 'pvb' | 'pvr', name: string, phase: 'InProgress'): Promise<void> {
  const client = kind === 'pvb' ? pvbs() : pvrs();
  await client.updateStatus(NS, name, (o) => {
    o.status = { ...(o.status ?? {}), phase, startTimestamp: new Date().toISOString() };
  });
}

function pvbFor(name: string, volume: string): PodVolumeBackup {
  return newPodVolumeBackup({
    namespace: NS,
    name,
    labels: { 'velero.io/backup-name': `backup-${RUN}` },
    spec: {
      node: 'local-node-1',
      pod: { kind: 'Pod', namespace: 'app', name: 'web-0', uid: 'pod-uid-1' },
      volume,
      backupStorageLocation: 'default',
      repoIdentifier: '',
      uploaderType: 'kopia',
      tags: { backup: `backup-${RUN}`, ns: 'app', pod: 'web-0', volume },
    },
  });
}

/** A mix the restore must reproduce: text, random bytes across several chunks, a sub-directory, a symlink, modes. */
function writeSampleVolume(dir: string): void {
  mkdirSync(join(dir, 'sub', 'deeper'), { recursive: true });
  writeFileSync(join(dir, 'hello.txt'), 'hello from the data mover\n');
  writeFileSync(join(dir, 'random.bin'), randomFillSync(Buffer.alloc(6 << 20)));
  for (let i = 0; i < 50; i++) writeFileSync(join(dir, 'sub', `small-${i}.txt`), `file ${i}\n`.repeat(i + 1));
  writeFileSync(join(dir, 'sub', 'deeper', 'script.sh'), '#!/bin/sh\necho hi\n', { mode: 0o750 });
  symlinkSync('../hello.txt', join(dir, 'sub', 'link'));
}

function compareTrees(a: string, b: string, skip: string[] = []): void {
  const names = readdirSync(a).filter((n) => !skip.includes(n)).sort();
  expect(readdirSync(b).filter((n) => !skip.includes(n)).sort()).toEqual(names);
  for (const n of names) {
    const sa = lstatSync(join(a, n));
    const sb = lstatSync(join(b, n));
    expect(sb.mode, n).toBe(sa.mode);
    if (sa.isDirectory()) compareTrees(join(a, n), join(b, n));
    else if (sa.isSymbolicLink()) expect(readlinkSync(join(b, n))).toBe(readlinkSync(join(a, n)));
    else {
      expect(readFileSync(join(b, n)).equals(readFileSync(join(a, n))), `${n} bytes`).toBe(true);
      expect(Math.floor(sb.mtimeMs)).toBe(Math.floor(sa.mtimeMs));
    }
  }
}

async function ensureCrds(): Promise<void> {
  for (const crd of allCrds()) {
    try {
      await kube.apiext.createCustomResourceDefinition({ body: crdAsClientModel(structuredClone(crd)) });
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
  for (const plural of ['podvolumebackups', 'podvolumerestores', 'backupstoragelocations']) {
    await waitFor(async () => {
      const crd = await kube.apiext.readCustomResourceDefinition({ name: `${plural}.velero.io` });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, { timeoutMs: 30_000, description: `CRD ${plural} established` });
  }
}

beforeAll(async () => {
  const info = clusterInfo();
  kubeconfig = info.kubeconfigPath;
  kube = kubeFromConfig(kubeConfig());
  await ensureCrds();
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
  location = newBackupStorageLocation({
    namespace: NS,
    name: 'default',
    spec: {
      provider: 'aws',
      objectStorage: { bucket: info.s3.bucket, prefix: PREFIX },
      credential: { name: 'creds', key: 'cloud' },
      config: { region: info.s3.region, s3Url: info.s3.endpoint, s3ForcePathStyle: 'true' },
    },
  });
  location = await customClient<BackupStorageLocation>(kube, Kinds.BackupStorageLocation, parseBackupStorageLocation).create(location);
  // What the BackupRepository controller does before any PVB of namespace "app" runs.
  const store = await openRepositoryStore({ location, volumeNamespace: 'app', kube });
  await Repository.init({ store, password: PASSWORD, kdf: { N: 1024, r: 8, p: 1 } });
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

describe('pod-volume backup and restore data mover', () => {
  const source = join(work, 'source');
  let snapshotID = '';

  it('waits for InProgress, backs up the volume, reports through Events and the termination message, and leaves status alone', async () => {
    writeSampleVolume((mkdirSync(source), source));
    const name = `pvb-${RUN}-1`;
    await pvbs().create(pvbFor(name, 'data'));
    const mover = startMover('backup', name, source);
    // Nothing happens before the node-agent sets the PVB InProgress.
    await waitFor(async () => (await pvbs().get(NS, name)) !== undefined, { timeoutMs: 10_000, description: 'PVB exists' });
    expect(await reasonsFor(name)).toEqual([]);
    await setPhase('pvb', name, 'InProgress');
    const { exitCode, stderr } = await mover.done;
    expect(exitCode, stderr).toBe(0);

    const result = JSON.parse(readFileSync(mover.termination, 'utf8')) as { snapshotID: string; emptySnapshot: boolean; source: unknown; totalBytes: number };
    expect(result.snapshotID).toMatch(/^[0-9a-f]{16,}$/);
    expect(result).toMatchObject({ emptySnapshot: false, source: { byPath: source, volumeMode: 'Filesystem' } });
    expect(result.totalBytes).toBeGreaterThan(6 << 20);
    snapshotID = result.snapshotID;

    const events = await waitFor(async () => {
      const ev = await eventsFor(name);
      return ev.some((e) => e.reason === 'Data-Path-Stopped') ? ev : undefined;
    }, { timeoutMs: 10_000, description: 'Data-Path-Stopped event' });
    const reasons = events.map((e) => e.reason);
    expect(reasons[0]).toBe('Data-Path-Started');
    expect(reasons.slice(-2)).toEqual(['Data-Path-Completed', 'Data-Path-Stopped']);
    expect(reasons.filter((r) => r !== 'Data-Path-Progress')).toEqual(['Data-Path-Started', 'Data-Path-Completed', 'Data-Path-Stopped']);
    const byReason = (r: string) => events.find((e) => e.reason === r)!;
    expect(byReason('Data-Path-Started').message).toBe(`Data path for ${name} started`);
    expect(byReason('Data-Path-Completed').message).toBe(readFileSync(mover.termination, 'utf8'));
    const progress = JSON.parse(byReason('Data-Path-Progress').message ?? '') as { totalBytes?: number; doneBytes?: number };
    expect(progress.totalBytes).toBeGreaterThan(0);
    // Repeated progress updates one Event, as Velero's recorder does; its last message is the final progress.
    expect(reasons.filter((r) => r === 'Data-Path-Progress')).toHaveLength(1);
    expect(progress).toEqual({ totalBytes: result.totalBytes, doneBytes: result.totalBytes });
    for (const e of events) {
      expect(e.type).toBe('Normal');
      expect(e.involvedObject.kind).toBe('PodVolumeBackup');
      expect(e.source?.component).toBe(name);
      expect(e.source?.host).toBe('local-node-1');
      expect(e.message).not.toContain(PASSWORD);
    }
    expect(stderr).not.toContain(PASSWORD);
    // The node-agent owns status: the data mover did not move the phase on.
    expect((await pvbs().get(NS, name))?.status?.phase).toBe('InProgress');
  }, 120_000);

  it('a second backup of the same pod volume is incremental: its parent is the first snapshot', async () => {
    writeFileSync(join(source, 'new.txt'), 'added after the first backup\n');
    const name = `pvb-${RUN}-2`;
    await pvbs().create(pvbFor(name, 'data'));
    const mover = startMover('backup', name, source);
    await setPhase('pvb', name, 'InProgress');
    const { exitCode, stderr } = await mover.done;
    expect(exitCode, stderr).toBe(0);
    const second = JSON.parse(readFileSync(mover.termination, 'utf8')) as { snapshotID: string };
    expect(second.snapshotID).not.toBe(snapshotID);
    const repo = await Repository.open({ store: await openRepositoryStore({ location, volumeNamespace: 'app', kube }), password: PASSWORD });
    const snap = await repo.loadSnapshot(second.snapshotID);
    expect(snap.parent).toBe(snapshotID);
    expect(snap.summary.reusedBytes).toBeGreaterThan(6 << 20);
    expect(snap.tags).toMatchObject({ backup: `backup-${RUN}`, 'snapshot-requester': 'snapshot-pod-volume', 'snapshot-real-source': 'app/web-0/data' });
    snapshotID = second.snapshotID;
  }, 120_000);

  it('restores the snapshot byte for byte, writes .velero/<restore UID>, and restore-helper then lets the pod start', async () => {
    const restores = join(work, 'restores');
    const target = join(restores, 'data');
    mkdirSync(target, { recursive: true });
    const name = `pvr-${RUN}-1`;
    const restoreUID = `restore-uid-${RUN}`;
    await pvrs().create(
      newPodVolumeRestore({
        namespace: NS,
        name,
        labels: { 'velero.io/restore-name': `restore-${RUN}`, 'velero.io/restore-uid': restoreUID },
        spec: {
          pod: { kind: 'Pod', namespace: 'app-restored', name: 'web-0', uid: 'pod-uid-2' },
          volume: 'data',
          backupStorageLocation: 'default',
          repoIdentifier: '',
          uploaderType: 'kopia',
          snapshotID,
          sourceNamespace: 'app',
        },
      }),
    );
    // restore-wait waits for the marker; it is started first, as the init container runs before the restore.
    const helper = cairn(['restore-helper', restoreUID, '--restores-dir', restores], { timeoutMs: 120_000 });
    const mover = startMover('restore', name, target);
    await setPhase('pvr', name, 'InProgress');
    const { exitCode, stderr } = await mover.done;
    expect(exitCode, stderr).toBe(0);
    expect(JSON.parse(readFileSync(mover.termination, 'utf8'))).toMatchObject({ target: { byPath: target, volumeMode: 'Filesystem' } });
    const reasons = await waitFor(async () => {
      const r = await reasonsFor(name);
      return r.includes('Data-Path-Stopped') ? r : undefined;
    }, { timeoutMs: 10_000, description: 'Data-Path-Stopped event' });
    expect(reasons.filter((r) => r !== 'Data-Path-Progress')).toEqual(['Data-Path-Started', 'Data-Path-Completed', 'Data-Path-Stopped']);

    const helped = await helper;
    expect(helped.exitCode, helped.stderr).toBe(0);
    expect(helped.stdout).toContain(`Found the done file ${join(target, '.velero', restoreUID)}`);
    expect(helped.stdout).toContain('Done cleanup .velero folder');
    expect(existsSync(join(target, '.velero'))).toBe(false);
    compareTrees(source, target);
  }, 120_000);

  it('spec.cancel stops a running backup: Data-Path-Canceling, Data-Path-Canceled, exit 1 and "data path is canceled"', async () => {
    const big = join(work, 'big');
    mkdirSync(big);
    const chunk = Buffer.alloc(32 << 20);
    // 128 MiB under a 16 MiB/s upload cap: the backup runs for 8 s on any machine, so the cancel finds it running.
    for (let i = 0; i < 4; i++) writeFileSync(join(big, `part-${i}.bin`), randomFillSync(chunk));
    const name = `pvb-${RUN}-cancel`;
    await pvbs().create(pvbFor(name, 'big'));
    const mover = startMover('backup', name, big, ['--upload-bytes-per-second=16777216']);
    await setPhase('pvb', name, 'InProgress');
    await waitFor(async () => (await reasonsFor(name)).includes('Data-Path-Started'), { timeoutMs: 30_000, description: 'Data-Path-Started' });
    await pvbs().patch(NS, name, { spec: { cancel: true } });
    const { exitCode } = await mover.done;
    expect(exitCode).toBe(1);
    expect(readFileSync(mover.termination, 'utf8')).toBe(`Failed to run data path service for PVB ${name}: data path is canceled`);
    const reasons = await waitFor(async () => {
      const r = await reasonsFor(name);
      return r.includes('Data-Path-Stopped') ? r : undefined;
    }, { timeoutMs: 10_000, description: 'Data-Path-Stopped event' });
    expect(reasons.filter((r) => r !== 'Data-Path-Progress')).toEqual(['Data-Path-Started', 'Data-Path-Canceling', 'Data-Path-Canceled', 'Data-Path-Stopped']);
    const canceled = (await eventsFor(name)).find((e) => e.reason === 'Data-Path-Canceled');
    expect(canceled?.message).toBe(`Data path for PVB ${name} canceled`);
  }, 180_000);

  it('a volume namespace without a repository fails clearly (init failure) and exits 1', async () => {
    const name = `pvb-${RUN}-norepo`;
    const pvb = pvbFor(name, 'data');
    pvb.spec.pod.namespace = 'no-repo-here';
    await pvbs().create(pvb);
    const mover = startMover('backup', name, source);
    await setPhase('pvb', name, 'InProgress');
    const { exitCode } = await mover.done;
    expect(exitCode).toBe(1);
    const message = readFileSync(mover.termination, 'utf8');
    expect(message).toMatch(new RegExp(`^Failed to init data path service for PVB ${name}: no repository for volume namespace "no-repo-here"`));
    expect(message).not.toContain(PASSWORD);
  }, 60_000);
});
