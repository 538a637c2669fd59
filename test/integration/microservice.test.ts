/**
 * The in-pod data mover (`cairn pod-volume backup|restore`) and `cairn restore-helper`, run as local processes
 * against the local cluster and its MinIO, the way the node-agent's data-mover pod runs them: the test plays the
 * node-agent (creates the PVB/PVR, sets it InProgress, sets spec.cancel) and the BackupRepository controller
 * (initialises the repository and the credentials Secret), and checks what the node-agent would read: the Events
 * on the CR and the termination message.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreV1Event } from '@kubernetes/client-node';
import { newPodVolumeBackup, newPodVolumeRestore, type BackupStorageLocation, type PodVolumeBackup } from '../../src/api/index.js';
import { Repository } from '../../src/datapath/repository.js';
import { type Kube } from '../../src/kube/client.js';
import { openRepositoryStore } from '../../src/storage/repository-store.js';
import { cairn } from '../support/cli.js';
import { eventsInOrder, expectSameTree, setUpMoverNamespace, startMoverProcess, tearDownMoverNamespace, writeLargeData, writeSampleVolume as writeSampleVolume_, type MoverRun } from '../support/mover-fixture.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-dm-${RUN}`;
const PREFIX = `microservice-it-${RUN}`;
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;

let kube: Kube;
let kubeconfig: string;
let location: BackupStorageLocation;
const work = mkdtempSync(join(tmpdir(), 'cairn-dm-it-'));

const pvbs = () => veleroClients(kube).podVolumeBackups;
const pvrs = () => veleroClients(kube).podVolumeRestores;

/** Starts the data mover as the data-mover pod's container would, writing its termination message to a file. */
function startMover(verb: 'backup' | 'restore', name: string, volumePath: string, extra: string[] = []): MoverRun {
  const cr = verb === 'backup' ? `--pod-volume-backup=${name}` : `--pod-volume-restore=${name}`;
  return startMoverProcess({ name, work, namespace: NS, kubeconfig, args: ['pod-volume', verb, `--volume-path=${volumePath}`, cr, ...extra] });
}

const eventsFor = (name: string): Promise<CoreV1Event[]> => eventsInOrder(kube, NS, name);

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

const writeSampleVolume = (dir: string): void => writeSampleVolume_(dir, { greeting: 'hello from the data mover', randomMiB: 6, smallFiles: 50 });
const compareTrees = (a: string, b: string, skip: string[] = []): void => expectSameTree(a, b, { skip, mtimes: true });

beforeAll(async () => {
  ({ kube, kubeconfig, location } = await setUpMoverNamespace({ namespace: NS, prefix: PREFIX, password: PASSWORD, plurals: ['podvolumebackups', 'podvolumerestores'] }));
}, 120_000);

afterAll(() => tearDownMoverNamespace({ namespace: NS, prefix: PREFIX, work }));

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
    const snap = await repo.snapshots.find(second.snapshotID);
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
    // 128 MiB under a 16 MiB/s upload cap: the backup runs for 8 s on any machine, so the cancel finds it running.
    writeLargeData(big, 128, { partMiB: 32 });
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
