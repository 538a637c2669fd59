/**
 * The server's side of CSI snapshot data movement against the local cluster (with CSI) and its MinIO, through a real
 * installed server. No node agent runs: the test plays it by writing the DataUploads' status (Accepted → InProgress →
 * Completed with a snapshot ID, or Failed), and stand-in pods labelled as node agents let fs-backup take the volume
 * it is asked to take, so the test can see that a claim fs-backup took is not moved again. One moved snapshot is real
 * (made with the data path into the namespace's repository) so deleting the backup can be seen to delete it.
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBackup, type Backup, type DataUpload } from '../../src/api/index.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import type { BackupVolumeInfo } from '../../src/api/volume-info.js';
import { cairn } from '../support/cli.js';
import { clusterInfo, kubeConfig, kubectl } from '../support/cluster.js';
import { enableTestBedCsi } from '../support/test-bed-csi.js';
import { deleteBackupByRequest, expectOtherBackupCompletes, installServerWithStandInAgents, snapshotIDs, snapshotInRepository } from '../support/played-node-agent.js';
import { applyList, BACKUP_ENDED, backupInPhase, deletePrefix, getJsonGz, getObject, listKeys, podRunning, restartServer, serverRolledOut } from '../support/server-install.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-s-${RUN}`;
const APP = `dm-app-${RUN}`;
const OTHER = `dm-other-${RUN}`;
const PREFIX = `dm-server-it-${RUN}`;
const NODES = ['local-node-1', 'local-node-2'];
const TERMINAL = BACKUP_ENDED;

let kube: Kube;
let kubeconfig: string;
let snapshotID = '';

const backups = () => veleroClients(kube).backups;
const duClient = () => veleroClients(kube).dataUploads;
const pvbClient = () => veleroClients(kube).podVolumeBackups;
const repository = () => ({ kube, namespace: NS, volumeNamespace: APP });

const backupKey = (name: string, suffix: string) => `${PREFIX}/backups/${name}/${name}${suffix}`;
const storedBackup = async (name: string) => JSON.parse((await getObject(`${PREFIX}/backups/${name}/velero-backup.json`)).toString('utf8')) as Backup;

async function startBackup(name: string, namespaces: string[], spec: Partial<Backup['spec']> = {}, annotations?: Record<string, string>): Promise<void> {
  await backups().create(newBackup({ namespace: NS, name, ...(annotations ? { annotations } : {}), spec: { includedNamespaces: namespaces, snapshotMoveData: true, ...spec } }));
}

const phaseOf = (name: string, phases: readonly string[], timeoutMs?: number) => backupInPhase(kube, NS, name, phases, timeoutMs);

const dusOf = (backup: Backup) => duClient().list(NS, `velero.io/backup-uid=${backup.metadata.uid ?? ''}`);

async function onlyDu(backup: Backup): Promise<DataUpload> {
  const dus = await dusOf(backup);
  expect(dus).toHaveLength(1);
  return dus[0] as DataUpload;
}

/** What the node agent writes as a DataUpload moves on. */
async function setDuStatus(du: DataUpload, status: NonNullable<DataUpload['status']>): Promise<void> {
  await duClient().updateStatus(NS, du.metadata.name ?? '', (d) => {
    d.status = { ...(d.status ?? {}), ...status };
  });
}

async function completeDu(du: DataUpload, id: string, bytes: number): Promise<void> {
  const now = new Date().toISOString();
  await setDuStatus(du, { phase: 'Accepted', acceptedByNode: 'local-node-1', node: 'local-node-1', acceptedTimestamp: now });
  await setDuStatus(du, { phase: 'InProgress', startTimestamp: now, progress: { totalBytes: bytes, bytesDone: 0 } });
  await setDuStatus(du, { phase: 'Completed', snapshotID: id, path: `/${du.metadata.uid ?? ''}`, completionTimestamp: now, progress: { totalBytes: bytes, bytesDone: bytes } });
}

/** fs-backup's volume of each backup: the PVB ends as an empty volume (the test only cares that it exists). */
async function finishPvbs(backup: Backup): Promise<void> {
  for (const pvb of await pvbClient().list(NS, `velero.io/backup-uid=${backup.metadata.uid ?? ''}`)) {
    const now = new Date().toISOString();
    await pvbClient().updateStatus(NS, pvb.metadata.name ?? '', (p) => {
      p.status = { ...(p.status ?? {}), phase: 'Completed', message: 'volume was empty so no snapshot was taken', progress: {}, startTimestamp: now, completionTimestamp: now };
    });
  }
}

interface VolumeSnapshotJson {
  metadata: { name: string; generateName?: string; labels?: Record<string, string> };
  spec: { source: { persistentVolumeClaimName: string }; volumeSnapshotClassName: string };
}

async function volumeSnapshot(name: string): Promise<VolumeSnapshotJson | undefined> {
  const r = await kubectl(['-n', APP, 'get', 'volumesnapshot', name, '-o', 'json'], { allowFailure: true });
  return r.exitCode === 0 ? (JSON.parse(r.stdout) as VolumeSnapshotJson) : undefined;
}

const pvcUid = async (name: string) => (await kubectl(['-n', APP, 'get', 'pvc', name, '-o', 'jsonpath={.metadata.uid}'])).stdout.trim();

beforeAll(async () => {
  const info = clusterInfo();
  await enableTestBedCsi();
  kubeconfig = info.kubeconfigPath;
  kube = kubeFromConfig(kubeConfig());
  await installServerWithStandInAgents({ namespace: NS, prefix: PREFIX, nodes: NODES });
  await kubectl(['create', 'namespace', APP]);
  await kubectl(['create', 'namespace', OTHER]);
  const claim = (name: string, storageClassName: string) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: APP },
    spec: { storageClassName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } },
  });
  await applyList([
    claim('data', 'csi-hostpath-sc'),
    claim('logs', 'csi-hostpath-sc'),
    claim('scratch', 'local-path'),
    {
      apiVersion: 'v1',
      kind: 'Pod',
      // `logs` goes through fs-backup; `data` through snapshot data movement; `scratch` has no snapshot class.
      metadata: { name: 'db', namespace: APP, annotations: { 'backup.velero.io/backup-volumes': 'logs' } },
      spec: {
        containers: [
          {
            name: 'db',
            image: 'busybox',
            command: ['sleep', '3600'],
            volumeMounts: [{ name: 'data', mountPath: '/data' }, { name: 'logs', mountPath: '/logs' }, { name: 'scratch', mountPath: '/scratch' }],
          },
        ],
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
          { name: 'logs', persistentVolumeClaim: { claimName: 'logs' } },
          { name: 'scratch', persistentVolumeClaim: { claimName: 'scratch' } },
        ],
      },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: OTHER }, data: { a: 'b' } },
  ]);
  await waitFor(podRunning(APP, 'db'), { timeoutMs: 180_000, description: 'workload pod running' });
  await serverRolledOut(NS);
}, 45 * 60_000);

afterAll(async () => {
  await kubectl(['delete', 'namespace', NS, APP, OTHER, '--wait=false'], { allowFailure: true });
  await deletePrefix(`${PREFIX}/`);
});

describe('CSI snapshot data movement, server side', () => {
  const first = `dm-${RUN}`;

  it('snapshots the claim fs-backup did not take, creates its DataUpload and waits for it while another backup completes', async () => {
    await startBackup(first, [APP]);
    const waiting = await phaseOf(first, ['WaitingForPluginOperations', ...TERMINAL]);
    expect(waiting.status?.phase).toBe('WaitingForPluginOperations');
    // One PVB (logs) and one DataUpload (data).
    expect(waiting.status?.backupItemOperationsAttempted).toBe(2);
    expect(waiting.status?.completionTimestamp).toBeUndefined();

    const uid = waiting.metadata.uid ?? '';
    const dataUid = await pvcUid('data');
    const du = await onlyDu(waiting);
    expect(du.metadata.generateName).toBe(`${first}-`);
    expect(du.metadata.labels?.['velero.io/backup-name']).toBe(first);
    expect(du.metadata.labels?.['velero.io/backup-uid']).toBe(uid);
    expect(du.metadata.labels?.['velero.io/pvc-uid']).toBe(dataUid);
    const operationID = du.metadata.labels?.['velero.io/async-operation-id'] ?? '';
    expect(operationID.startsWith(`du-${uid}.`)).toBe(true);
    expect(operationID.length).toBeLessThanOrEqual(63);
    expect(du.metadata.ownerReferences).toEqual([{ apiVersion: 'velero.io/v1', kind: 'Backup', name: first, uid, controller: true }]);
    expect(du.spec).toMatchObject({
      snapshotType: 'CSI',
      csiSnapshot: { storageClass: 'csi-hostpath-sc', snapshotClass: 'csi-hostpath-snapclass', driver: 'hostpath.csi.k8s.io' },
      sourcePVC: 'data',
      sourceNamespace: APP,
      backupStorageLocation: 'default',
      datamover: 'velero',
      // Velero's mapping: the backup's csiSnapshotTimeout (server default 10m), the node agent's wait for the snapshot.
      operationTimeout: '10m0s',
    });
    expect(waiting.spec?.csiSnapshotTimeout).toBe('10m0s');

    const vs = await volumeSnapshot(du.spec.csiSnapshot?.volumeSnapshot ?? '');
    expect(vs?.metadata.generateName).toBe('velero-data-');
    expect(vs?.metadata.labels).toMatchObject({ 'velero.io/backup-name': first, 'velero.io/backup-uid': uid });
    expect(vs?.spec).toEqual({ source: { persistentVolumeClaimName: 'data' }, volumeSnapshotClassName: 'csi-hostpath-snapclass' });
    // fs-backup took `logs`: no snapshot of it.
    const all = JSON.parse((await kubectl(['-n', APP, 'get', 'volumesnapshot', '-o', 'json'])).stdout) as { items: VolumeSnapshotJson[] };
    expect(all.items.filter((s) => s.metadata.labels?.['velero.io/backup-uid'] === uid).map((s) => s.spec.source.persistentVolumeClaimName)).toEqual(['data']);

    // Items are stored; the files say the backup is still waiting.
    expect(await listKeys(`${PREFIX}/backups/${first}/`)).toContain(backupKey(first, '.tar.gz'));
    expect((await storedBackup(first)).status?.phase).toBe('WaitingForPluginOperations');
    const ops = await getJsonGz<{ spec: Record<string, unknown>; status: Record<string, unknown> }[]>(backupKey(first, '-itemoperations.json.gz'));
    expect(ops.find((o) => o.spec.operationID === operationID)).toMatchObject({
      spec: { backupItemAction: 'velero.io/csi-pvc-backupper', resourceIdentifier: { Group: '', Resource: 'persistentvolumeclaims', Namespace: APP, Name: 'data' } },
      status: { phase: 'New' },
    });
    const info = await getJsonGz<BackupVolumeInfo[]>(backupKey(first, '-volumeinfo.json.gz'));
    expect(info.find((e) => e.pvcName === 'data')).toMatchObject({ backupMethod: 'CSISnapshot', snapshotDataMoved: true, skipped: false, snapshotDataMovementInfo: { operationID, Phase: '' } });
    expect(info.find((e) => e.pvcName === 'logs')?.backupMethod).toBe('PodVolumeBackup');
    expect(info.find((e) => e.pvcName === 'scratch')).toMatchObject({ skipped: true, skippedReason: 'csiSnapshot: the volume is not a CSI volume;' });

    // The backup controller is free: another backup runs to completion meanwhile.
    const other = `dm-other-${RUN}`;
    await expectOtherBackupCompletes(kube, NS, { waiting: first, other, startOther: () => startBackup(other, [OTHER]) });
  }, 240_000);

  it('describe --details shows the DataUpload live, and the backup completes once it does, with its files and without the local snapshot', async () => {
    const backup = (await backups().get(NS, first)) as Backup;
    const du = await onlyDu(backup);
    await finishPvbs(backup);
    await setDuStatus(du, { phase: 'Accepted', acceptedByNode: 'local-node-2', node: 'local-node-2', acceptedTimestamp: new Date().toISOString() });
    await setDuStatus(du, { phase: 'InProgress', startTimestamp: new Date().toISOString(), progress: { totalBytes: 4096, bytesDone: 1024 } });
    const live = await cairn(['backup', 'describe', first, '--details', '-n', NS, '--no-color'], { kubeconfig });
    expect(live.exitCode, live.stderr).toBe(0);
    expect(live.stdout).toContain(`    ${APP}/data:\n      Data Movement:\n`);
    expect(live.stdout).toContain(`        Data Upload: ${du.metadata.name ?? ''}\n        Phase: In Progress\n        Node: local-node-2\n        Progress: 1024 of 4096 bytes (25%)\n`);
    expect((await backups().get(NS, first))?.status?.phase).toBe('WaitingForPluginOperations');

    // A real snapshot in the namespace's repository, as the data mover would have made it.
    snapshotID = await snapshotInRepository(repository(), { content: `data of ${RUN}\n`, tags: { backup: first }, tempPrefix: 'cairn-dm-src-' });
    await setDuStatus(du, { phase: 'Completed', snapshotID, path: '/x', completionTimestamp: new Date().toISOString(), progress: { totalBytes: 4096, bytesDone: 4096 } });

    const done = await phaseOf(first, TERMINAL);
    expect(done.status?.phase).toBe('Completed');
    expect(done.status).toMatchObject({ backupItemOperationsAttempted: 2, backupItemOperationsCompleted: 2, backupItemOperationsFailed: 0, errors: 0 });
    expect((await storedBackup(first)).status?.phase).toBe('Completed');
    const operationID = du.metadata.labels?.['velero.io/async-operation-id'];
    const ops = await getJsonGz<{ spec: Record<string, unknown>; status: Record<string, unknown> }[]>(backupKey(first, '-itemoperations.json.gz'));
    expect(ops.find((o) => o.spec.operationID === operationID)?.status).toMatchObject({ phase: 'Completed', nCompleted: 4096, nTotal: 4096, operationUnits: 'Bytes' });
    const info = await getJsonGz<BackupVolumeInfo[]>(backupKey(first, '-volumeinfo.json.gz'));
    const entry = info.find((e) => e.pvcName === 'data');
    expect(entry).toMatchObject({
      pvcNamespace: APP,
      backupMethod: 'CSISnapshot',
      snapshotDataMoved: true,
      preserveLocalSnapshot: false,
      skipped: false,
      result: 'succeeded',
      csiSnapshotInfo: { driver: 'hostpath.csi.k8s.io', ReadyToUse: true },
      snapshotDataMovementInfo: { dataMover: 'velero', uploaderType: 'kopia', snapshotHandle: snapshotID, operationID, size: 4096, Phase: 'Completed' },
      pvInfo: { reclaimPolicy: 'Delete' },
    });
    expect(entry?.pvName).toBeTruthy();
    expect(entry?.csiSnapshotInfo?.snapshotHandle).toBeTruthy();
    // The local snapshot is not kept.
    await waitFor(async () => (await volumeSnapshot(du.spec.csiSnapshot?.volumeSnapshot ?? '')) === undefined || undefined, {
      timeoutMs: 60_000,
      description: 'source VolumeSnapshot deleted',
    });
    const log = gunzipSync(await getObject(backupKey(first, '-logs.gz'))).toString('utf8');
    expect(log).toContain('Data uploads done');

    const after = await cairn(['backup', 'describe', first, '--details', '-n', NS, '--no-color'], { kubeconfig });
    expect(after.stdout).toContain(
      `    ${APP}/data:\n      Data Movement:\n        Operation ID: ${operationID ?? ''}\n        Data Mover: velero\n        Uploader Type: kopia\n        Moved data Size (bytes): 4096\n        Result: succeeded\n`,
    );
  }, 180_000);

  it('a failed DataUpload makes the backup PartiallyFailed with the error in its results', async () => {
    const name = `dm-fail-${RUN}`;
    await startBackup(name, [APP]);
    const waiting = await phaseOf(name, ['WaitingForPluginOperations']);
    await finishPvbs(waiting);
    const du = await onlyDu(waiting);
    await setDuStatus(du, { phase: 'Failed', message: `data path failed ${RUN}`, completionTimestamp: new Date().toISOString() });
    const done = await phaseOf(name, TERMINAL);
    expect(done.status?.phase).toBe('PartiallyFailed');
    expect(done.status).toMatchObject({ backupItemOperationsAttempted: 2, backupItemOperationsCompleted: 1, backupItemOperationsFailed: 1 });
    const results = await getJsonGz<{ errors: { namespaces?: Record<string, string[]> } }>(backupKey(name, '-results.gz'));
    expect(results.errors.namespaces?.[APP]?.join('\n')).toContain(`data path failed ${RUN}`);
    const info = await getJsonGz<BackupVolumeInfo[]>(backupKey(name, '-volumeinfo.json.gz'));
    expect(info.find((e) => e.pvcName === 'data')).toMatchObject({ result: 'failed', snapshotDataMovementInfo: { Phase: 'Failed' } });
    expect((await storedBackup(name)).status?.phase).toBe('PartiallyFailed');
    await waitFor(async () => (await volumeSnapshot(du.spec.csiSnapshot?.volumeSnapshot ?? '')) === undefined || undefined, { timeoutMs: 60_000, description: 'source VolumeSnapshot deleted' });
  }, 180_000);

  it("a Backup annotation naming a snapshot class that does not exist: the claim is not moved, with a warning in the backup's results", async () => {
    const name = `dm-class-${RUN}`;
    const annotation = 'velero.io/csi-volumesnapshot-class_hostpath.csi.k8s.io';
    await startBackup(name, [APP], {}, { [annotation]: 'no-such-class' });
    const waiting = await phaseOf(name, ['WaitingForPluginOperations', ...TERMINAL]);
    expect(await dusOf(waiting)).toEqual([]);
    await finishPvbs(waiting);
    const done = await phaseOf(name, TERMINAL);
    expect(done.status).toMatchObject({ phase: 'Completed', backupItemOperationsAttempted: 1 });
    const why = `VolumeSnapshotClass no-such-class does not exist (named by the backup's annotation ${annotation})`;
    const results = await getJsonGz<{ warnings: { namespaces?: Record<string, string[]> } }>(backupKey(name, '-results.gz'));
    expect(results.warnings.namespaces?.[APP]).toContain(`PVC ${APP}/data is not moved: ${why}`);
    const info = await getJsonGz<BackupVolumeInfo[]>(backupKey(name, '-volumeinfo.json.gz'));
    expect(info.find((e) => e.pvcName === 'data')).toMatchObject({ skipped: true, skippedReason: `csiSnapshot: ${why};` });
    const snapshots = JSON.parse((await kubectl(['-n', APP, 'get', 'volumesnapshot', '-o', 'json'])).stdout) as { items: VolumeSnapshotJson[] };
    expect(snapshots.items.filter((s) => s.metadata.labels?.['velero.io/backup-uid'] === done.metadata.uid)).toEqual([]);
  }, 180_000);

  it('past the item operation timeout the DataUpload is canceled and the backup is PartiallyFailed', async () => {
    const name = `dm-timeout-${RUN}`;
    await startBackup(name, [APP], { itemOperationTimeout: '20s' });
    const waiting = await phaseOf(name, ['WaitingForPluginOperations']);
    await finishPvbs(waiting);
    const done = await phaseOf(name, TERMINAL, 120_000);
    expect(done.status?.phase).toBe('PartiallyFailed');
    const du = await onlyDu(done);
    expect(du.spec.cancel).toBe(true);
    expect(du.status?.message).toContain('did not finish within the item operation timeout 20s');
    const ops = await getJsonGz<{ spec: { operationID: string }; status: { phase: string } }[]>(backupKey(name, '-itemoperations.json.gz'));
    expect(ops.find((o) => o.spec.operationID === du.metadata.labels?.['velero.io/async-operation-id'])?.status.phase).toBe('Failed');
  }, 180_000);

  it('a server restart while waiting: the new server finishes the backup', async () => {
    const name = `dm-restart-${RUN}`;
    await startBackup(name, [APP]);
    const waiting = await phaseOf(name, ['WaitingForPluginOperations']);
    await restartServer(NS);
    expect((await backups().get(NS, name))?.status?.phase).toBe('WaitingForPluginOperations');
    await finishPvbs(waiting);
    await completeDu(await onlyDu(waiting), snapshotID, 4096);
    const done = await phaseOf(name, TERMINAL, 150_000);
    expect(done.status?.phase).toBe('Completed');
    expect(await dusOf(done)).toHaveLength(1);
  }, 420_000);

  it('deleting a backup deletes its moved snapshots and DataUploads', async () => {
    expect(await snapshotIDs(repository())).toContain(snapshotID);
    // The restart test's backup names the same snapshot: delete both so it is really gone.
    for (const name of [first, `dm-restart-${RUN}`]) {
      const backup = (await backups().get(NS, name)) as Backup;
      const processed = await deleteBackupByRequest(kube, NS, name);
      expect(processed.status?.errors ?? []).toEqual([]);
      expect(await backups().get(NS, name)).toBeUndefined();
      await waitFor(async () => (await dusOf(backup)).length === 0 || undefined, { timeoutMs: 60_000, description: `DataUploads of ${name} gone` });
      expect(await listKeys(`${PREFIX}/backups/${name}/`)).toEqual([]);
    }
    expect(await snapshotIDs(repository())).not.toContain(snapshotID);
  }, 240_000);
});
