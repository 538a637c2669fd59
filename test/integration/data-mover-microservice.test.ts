/**
 * The snapshot data mover (`cairn data-mover backup|restore`) run as local processes against the local cluster and
 * its MinIO, the way the node-agent's backup/restore pod runs it: the test plays the node-agent (creates the
 * DataUpload/DataDownload, sets it InProgress, sets spec.cancel) and the BackupRepository controller (initialises
 * the repository and the credentials Secret), and checks what the node-agent would read: the Events on the CR and
 * the termination message. Block mode is tested with a regular file standing in for the device.
 */
import { randomBytes, randomFillSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreV1Event } from '@kubernetes/client-node';
import { newDataDownload, newDataUpload, type BackupStorageLocation, type DataDownload, type DataUpload } from '../../src/api/index.js';
import { Repository } from '../../src/datapath/repository.js';
import { type Kube } from '../../src/kube/client.js';
import { openRepositoryStore } from '../../src/storage/repository-store.js';
import { eventsInOrder, expectSameTree, setUpMoverNamespace, startMoverProcess, tearDownMoverNamespace, writeLargeData, writeSampleVolume as writeSampleVolume_, type MoverRun } from '../support/mover-fixture.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-vgdp-${RUN}`;
const PREFIX = `data-mover-it-${RUN}`;
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;

let kube: Kube;
let kubeconfig: string;
let location: BackupStorageLocation;
const work = mkdtempSync(join(tmpdir(), 'cairn-vgdp-it-'));

const dus = () => veleroClients(kube).dataUploads;
const dds = () => veleroClients(kube).dataDownloads;

/** Starts the data mover as the backup/restore pod's container would, writing its termination message to a file. */
function startMover(verb: 'backup' | 'restore', name: string, volumePath: string, volumeMode: 'Filesystem' | 'Block' = 'Filesystem', extra: string[] = []): MoverRun {
  const cr = verb === 'backup' ? `--data-upload=${name}` : `--data-download=${name}`;
  return startMoverProcess({ name, work, namespace: NS, kubeconfig, args: ['data-mover', verb, `--volume-path=${volumePath}`, `--volume-mode=${volumeMode}`, cr, ...extra] });
}

const eventsFor = (name: string): Promise<CoreV1Event[]> => eventsInOrder(kube, NS, name);

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

const writeSampleVolume = (dir: string): void => writeSampleVolume_(dir, { greeting: 'hello from the snapshot data mover', randomMiB: 5, smallFiles: 20 });
const compareTrees = (a: string, b: string): void => expectSameTree(a, b);

async function openRepo(): Promise<Repository> {
  return Repository.open({ store: await openRepositoryStore({ location, volumeNamespace: 'app', kube }), password: PASSWORD });
}

beforeAll(async () => {
  ({ kube, kubeconfig, location } = await setUpMoverNamespace({ namespace: NS, prefix: PREFIX, password: PASSWORD, plurals: ['datauploads', 'datadownloads'] }));
}, 120_000);

afterAll(() => tearDownMoverNamespace({ namespace: NS, prefix: PREFIX, work }));

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
    const snap = await (await openRepo()).snapshots.find(snapshotID);
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
    const snap = await (await openRepo()).snapshots.find(second.snapshotID);
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
    // 128 MiB under a 16 MiB/s upload cap: the backup runs for 8 s on any machine, so the cancel finds it running.
    writeLargeData(big, 128, { partMiB: 32 });
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
