/**
 * The server's side of fs-backup against the local cluster and its MinIO, through a real installed server. The test
 * plays the node agent: cairn is installed without the node-agent DaemonSet, stand-in pods labelled as node agents
 * make the "node-agent runs on the pod's node" check pass, and the test writes the PodVolumeBackups' status itself. One
 * snapshot is real (made with the data path into the namespace's repository) so deleting the backup can be seen to
 * delete it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBackup, type Backup, type PodVolumeBackup } from '../../src/api/index.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import { createLogger } from '../../src/base/logger.js';
import { PodVolumeBackupCreator } from '../../src/server/podvolume/backup-creator.js';
import type { PodLike } from '../../src/server/podvolume/backup-volumes.js';
import type { BackupVolumeInfo } from '../../src/api/volume-info.js';
import { kubeConfig, kubectl } from '../support/cluster.js';
import { deleteBackupByRequest, expectOtherBackupCompletes, installServerWithStandInAgents, snapshotIDs, snapshotInRepository } from '../support/played-node-agent.js';
import { applyList, BACKUP_ENDED, backupInPhase, deletePrefix, getJsonGz, getObject, listKeys, podRunning, restartServer, serverRolledOut } from '../support/server-install.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-b-${RUN}`;
const APP = `fsb-app-${RUN}`;
const OTHER = `fsb-other-${RUN}`;
const PREFIX = `fsb-server-it-${RUN}`;
const NODES = ['local-node-1', 'local-node-2'];
const TERMINAL = BACKUP_ENDED;

let kube: Kube;

const backups = () => veleroClients(kube).backups;
const pvbClient = () => veleroClients(kube).podVolumeBackups;
const repository = () => ({ kube, namespace: NS, volumeNamespace: APP });

const backupKey = (name: string, suffix: string) => `${PREFIX}/backups/${name}/${name}${suffix}`;

async function startBackup(name: string, namespaces: string[], annotations?: Record<string, string>): Promise<void> {
  await backups().create(newBackup({ namespace: NS, name, ...(annotations ? { annotations } : {}), spec: { includedNamespaces: namespaces } }));
}

const phaseOf = (name: string, phases: readonly string[], timeoutMs?: number) => backupInPhase(kube, NS, name, phases, timeoutMs);

async function pvbsOf(name: string): Promise<PodVolumeBackup[]> {
  return (await pvbClient().list(NS, `velero.io/backup-name=${name}`)).sort((a, b) => a.spec.volume.localeCompare(b.spec.volume));
}

/** What the node agent would write when a PVB ends. */
async function finishPvb(pvb: PodVolumeBackup, status: NonNullable<PodVolumeBackup['status']>): Promise<void> {
  const now = new Date().toISOString();
  await pvbClient().updateStatus(NS, pvb.metadata.name ?? '', (p) => {
    p.status = { ...(p.status ?? {}), startTimestamp: now, completionTimestamp: now, ...status };
  });
}

const completed = (snapshotID: string, bytes: number): NonNullable<PodVolumeBackup['status']> => ({
  phase: 'Completed',
  snapshotID,
  path: '/host_pods/x',
  progress: { totalBytes: bytes, bytesDone: bytes },
});
const emptyVolume: NonNullable<PodVolumeBackup['status']> = { phase: 'Completed', message: 'volume was empty so no snapshot was taken', progress: {} };

beforeAll(async () => {
  kube = kubeFromConfig(kubeConfig());
  await installServerWithStandInAgents({ namespace: NS, prefix: PREFIX, nodes: NODES });
  await kubectl(['create', 'namespace', APP]);
  await kubectl(['create', 'namespace', OTHER]);
  await applyList([
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-pvc', namespace: APP }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Mi' } } } },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: APP, annotations: { 'backup.velero.io/backup-volumes': 'data,cache' } },
      spec: {
        containers: [{ name: 'web', image: 'busybox', command: ['sleep', '3600'], volumeMounts: [{ name: 'data', mountPath: '/data' }, { name: 'cache', mountPath: '/cache' }] }],
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'data-pvc' } },
          { name: 'cache', emptyDir: {} },
        ],
      },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: OTHER }, data: { a: 'b' } },
  ]);
  await waitFor(podRunning(APP, 'web'), { timeoutMs: 120_000, description: 'workload pod running' });
  await serverRolledOut(NS);
}, 400_000);

afterAll(async () => {
  await kubectl(['delete', 'namespace', NS, APP, OTHER, '--wait=false'], { allowFailure: true });
  await deletePrefix(`${PREFIX}/`);
});

describe('fs-backup, server side', () => {
  const first = `fsb-${RUN}`;
  let snapshotID = '';

  it('creates one PVB per volume and waits for them while another backup completes', async () => {
    await startBackup(first, [APP]);
    const waiting = await phaseOf(first, ['WaitingForPluginOperations', ...TERMINAL]);
    expect(waiting.status?.phase).toBe('WaitingForPluginOperations');
    expect(waiting.status?.backupItemOperationsAttempted).toBe(2);
    expect(waiting.status?.completionTimestamp).toBeUndefined();

    // The repository of the pod's namespace was made Ready before any PVB.
    const repo = await veleroClients(kube).repositories.get(NS, `${APP}-default-kopia`);
    expect(repo?.status?.phase).toBe('Ready');

    const pvbs = await pvbsOf(first);
    expect(pvbs.map((p) => p.spec.volume)).toEqual(['cache', 'data']);
    const pod = JSON.parse((await kubectl(['-n', APP, 'get', 'pod', 'web', '-o', 'json'])).stdout) as { metadata: { uid: string }; spec: { nodeName: string } };
    const pvcUid = (await kubectl(['-n', APP, 'get', 'pvc', 'data-pvc', '-o', 'jsonpath={.metadata.uid}'])).stdout.trim();
    const [cache, data] = pvbs as [PodVolumeBackup, PodVolumeBackup];
    expect(data.metadata.generateName).toBe(`${first}-`);
    expect(data.metadata.labels).toEqual({ 'velero.io/backup-name': first, 'velero.io/backup-uid': waiting.metadata.uid, 'velero.io/pvc-uid': pvcUid });
    expect(data.metadata.annotations?.['velero.io/pvc-name']).toBe('data-pvc');
    expect(data.metadata.ownerReferences).toEqual([{ apiVersion: 'velero.io/v1', kind: 'Backup', name: first, uid: waiting.metadata.uid, controller: true }]);
    expect(data.spec).toMatchObject({
      node: pod.spec.nodeName,
      pod: { kind: 'Pod', namespace: APP, name: 'web', uid: pod.metadata.uid },
      volume: 'data',
      backupStorageLocation: 'default',
      repoIdentifier: '',
      uploaderType: 'kopia',
      tags: { backup: first, 'backup-uid': waiting.metadata.uid, pod: 'web', 'pod-uid': pod.metadata.uid, ns: APP, volume: 'data', 'pvc-uid': pvcUid },
    });
    expect(cache.metadata.labels?.['velero.io/pvc-uid']).toBeUndefined();
    expect(cache.metadata.annotations?.['velero.io/pvc-name']).toBeUndefined();

    // Items are already stored; velero-backup.json says the backup is still waiting.
    const keys = await listKeys(`${PREFIX}/backups/${first}/`);
    expect(keys).toContain(`${PREFIX}/backups/${first}/${first}.tar.gz`);

    // The backup controller is free: another backup runs to completion meanwhile.
    const other = `fsb-other-${RUN}`;
    await expectOtherBackupCompletes(kube, NS, { waiting: first, other, startOther: () => startBackup(other, [OTHER]) });
  }, 240_000);

  it('a backup run again (after a server restart) reuses its PVBs instead of creating new ones', async () => {
    const backup = (await backups().get(NS, first)) as Backup;
    const pod = JSON.parse((await kubectl(['-n', APP, 'get', 'pod', 'web', '-o', 'json'])).stdout) as PodLike;
    const before = (await pvbsOf(first)).map((p) => p.metadata.name).sort();
    const creator = new PodVolumeBackupCreator({ kube, namespace: NS, backup });
    const outcome = await creator.backupPod(pod, { pvcsIncluded: true, log: createLogger({ level: 'warn' }) });
    expect(outcome.errors).toEqual([]);
    expect(outcome.pvbs.map((p) => p.metadata.name).sort()).toEqual(before);
    expect((await pvbsOf(first)).map((p) => p.metadata.name).sort()).toEqual(before);
    expect(outcome.volumeInfo.map((v) => [v.pvcName ?? null, v.backupMethod, v.pvbInfo?.volumeName])).toEqual([
      ['data-pvc', 'PodVolumeBackup', 'data'],
      [null, 'PodVolumeBackup', 'cache'],
    ]);
  }, 60_000);

  it('completes once its PVBs complete, with podvolumebackups, itemoperations and volumeinfo in storage', async () => {
    // A real snapshot in the namespace's repository, as the data mover would have made it.
    snapshotID = await snapshotInRepository(repository(), { content: `data of ${RUN}\n`, tags: { backup: first }, tempPrefix: 'cairn-fsb-src-' });

    const [cache, data] = (await pvbsOf(first)) as [PodVolumeBackup, PodVolumeBackup];
    await finishPvb(data, completed(snapshotID, 1234));
    await finishPvb(cache, emptyVolume);
    const done = await phaseOf(first, TERMINAL);
    expect(done.status?.phase).toBe('Completed');
    expect(done.status).toMatchObject({ backupItemOperationsAttempted: 2, backupItemOperationsCompleted: 2, backupItemOperationsFailed: 0, errors: 0 });
    expect(done.status?.completionTimestamp).toBeTruthy();

    const stored = await getJsonGz<PodVolumeBackup[]>(backupKey(first, '-podvolumebackups.json.gz'));
    // Both files list the PVBs by name.
    const byName = [cache, data].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    expect(stored.map((p) => [p.kind, p.metadata.name, p.status?.phase])).toEqual(byName.map((p) => ['PodVolumeBackup', p.metadata.name, 'Completed']));
    const ops = await getJsonGz<{ spec: Record<string, unknown>; status: Record<string, unknown> }[]>(backupKey(first, '-itemoperations.json.gz'));
    expect(ops.map((o) => [o.spec.operationID, o.spec.backupItemAction, o.status.phase])).toEqual(byName.map((p) => [`pvb-${p.metadata.name}`, 'velero.io/pod-volume-backup', 'Completed']));
    const dataOp = ops.find((o) => o.spec.operationID === `pvb-${data.metadata.name}`);
    expect(dataOp?.spec.resourceIdentifier).toEqual({ Group: '', Resource: 'pods', Namespace: APP, Name: 'web' });
    expect(dataOp?.status).toMatchObject({ nCompleted: 1234, nTotal: 1234, operationUnits: 'Bytes' });

    const info = await getJsonGz<BackupVolumeInfo[]>(backupKey(first, '-volumeinfo.json.gz'));
    const pvc = info.find((e) => e.pvcName === 'data-pvc');
    expect(pvc).toMatchObject({
      pvcNamespace: APP,
      backupMethod: 'PodVolumeBackup',
      skipped: false,
      result: 'succeeded',
      pvbInfo: { snapshotHandle: snapshotID, size: 1234, uploaderType: 'kopia', volumeName: 'data', podName: 'web', podNamespace: APP, Phase: 'Completed' },
      pvInfo: { reclaimPolicy: 'Delete' },
    });
    expect(pvc?.pvName).toBeTruthy();
    expect(info.find((e) => e.pvbInfo?.volumeName === 'cache')).toMatchObject({ backupMethod: 'PodVolumeBackup', result: 'succeeded', pvbInfo: { podName: 'web', Phase: 'Completed' } });
    const metadata = JSON.parse((await getObject(`${PREFIX}/backups/${first}/velero-backup.json`)).toString('utf8')) as Backup;
    expect(metadata.status?.phase).toBe('Completed');
  }, 180_000);

  it('a failed PVB makes the backup PartiallyFailed with the error in its results', async () => {
    const name = `fsb-fail-${RUN}`;
    await startBackup(name, [APP]);
    await phaseOf(name, ['WaitingForPluginOperations']);
    const [cache, data] = (await pvbsOf(name)) as [PodVolumeBackup, PodVolumeBackup];
    await finishPvb(cache, emptyVolume);
    await finishPvb(data, { phase: 'Failed', message: `data path failed ${RUN}` });
    const done = await phaseOf(name, TERMINAL);
    expect(done.status?.phase).toBe('PartiallyFailed');
    expect(done.status).toMatchObject({ backupItemOperationsCompleted: 1, backupItemOperationsFailed: 1 });
    expect(done.status?.errors).toBeGreaterThanOrEqual(1);
    const results = await getJsonGz<{ errors: { namespaces?: Record<string, string[]> } }>(backupKey(name, '-results.gz'));
    expect(results.errors.namespaces?.[APP]).toContain(`pod volume backup failed: data path failed ${RUN}`);
    const info = await getJsonGz<BackupVolumeInfo[]>(backupKey(name, '-volumeinfo.json.gz'));
    expect(info.find((e) => e.pvcName === 'data-pvc')?.result).toBe('failed');
    // The volume that did complete is kept.
    expect(info.find((e) => e.pvbInfo?.volumeName === 'cache')?.result).toBe('succeeded');
  }, 180_000);

  it('a server restart while waiting: the new server finishes the backup', async () => {
    const name = `fsb-restart-${RUN}`;
    await startBackup(name, [APP]);
    await phaseOf(name, ['WaitingForPluginOperations']);
    await restartServer(NS);
    expect((await backups().get(NS, name))?.status?.phase).toBe('WaitingForPluginOperations');
    for (const pvb of await pvbsOf(name)) await finishPvb(pvb, pvb.spec.volume === 'data' ? completed(snapshotID, 1234) : emptyVolume);
    const done = await phaseOf(name, TERMINAL, 150_000);
    expect(done.status?.phase).toBe('Completed');
    expect(done.status?.failureReason).toBeUndefined();
    expect(await pvbsOf(name)).toHaveLength(2);
  }, 420_000);

  it('a backup left mid-upload by a dying server is run again, not finalized without its files', async () => {
    const name = `fsb-upload-${RUN}`;
    // What a server that died between recording WaitingForPluginOperations and uploading the items leaves behind.
    const left = newBackup({ namespace: NS, name, annotations: { 'backup.cairn.io/uploading': 'true' }, spec: { includedNamespaces: [APP], storageLocation: 'default', ttl: '720h0m0s' } });
    left.status = { phase: 'WaitingForPluginOperations', startTimestamp: new Date().toISOString(), backupItemOperationsAttempted: 2, version: 1, formatVersion: '1.1.0' };
    await backups().create(left);
    const rerun = await waitFor(
      async () => {
        const b = await backups().get(NS, name);
        return b?.status?.phase === 'WaitingForPluginOperations' && !b.metadata.annotations?.['backup.cairn.io/uploading'] ? b : undefined;
      },
      { timeoutMs: 120_000, description: 'backup run again up to WaitingForPluginOperations' },
    );
    expect(rerun.status?.backupItemOperationsAttempted).toBe(2);
    expect(await listKeys(`${PREFIX}/backups/${name}/`)).toContain(`${PREFIX}/backups/${name}/${name}.tar.gz`);
    for (const pvb of await pvbsOf(name)) await finishPvb(pvb, emptyVolume);
    expect((await phaseOf(name, TERMINAL)).status?.phase).toBe('Completed');
  }, 180_000);

  it('past the fs-backup timeout: pending PVBs are canceled, the backup is PartiallyFailed, completed volumes kept', async () => {
    const name = `fsb-timeout-${RUN}`;
    await startBackup(name, [APP], { 'velero.io/pod-volume-timeout': '25s' });
    await phaseOf(name, ['WaitingForPluginOperations']);
    const [cache] = (await pvbsOf(name)) as [PodVolumeBackup, PodVolumeBackup];
    await finishPvb(cache, emptyVolume);
    const done = await phaseOf(name, TERMINAL, 120_000);
    expect(done.status?.phase).toBe('PartiallyFailed');
    const [, data] = (await pvbsOf(name)) as [PodVolumeBackup, PodVolumeBackup];
    expect(data.spec.cancel).toBe(true);
    expect(data.status?.message).toContain('timed out waiting for all PodVolumeBackups to complete');
    const results = await getJsonGz<{ errors: { velero?: string[]; namespaces?: Record<string, string[]> } }>(backupKey(name, '-results.gz'));
    expect(results.errors.velero).toContain('timed out waiting for all PodVolumeBackups to complete');
    const ops = await getJsonGz<{ spec: { operationID: string }; status: { phase: string } }[]>(backupKey(name, '-itemoperations.json.gz'));
    expect(ops.find((o) => o.spec.operationID === `pvb-${data.metadata.name}`)?.status.phase).toBe('Failed');
    expect(ops.find((o) => o.spec.operationID === `pvb-${cache.metadata.name}`)?.status.phase).toBe('Completed');
  }, 180_000);

  it('deleting a backup deletes its pod volume snapshots and PVBs', async () => {
    expect(await snapshotIDs(repository())).toContain(snapshotID);
    // The restart test's backup names the same snapshot: delete both so it is really gone.
    for (const name of [first, `fsb-restart-${RUN}`]) {
      const processed = await deleteBackupByRequest(kube, NS, name);
      expect(processed.status?.errors ?? []).toEqual([]);
      expect(await backups().get(NS, name)).toBeUndefined();
      expect(await pvbsOf(name)).toEqual([]);
      expect(await listKeys(`${PREFIX}/backups/${name}/`)).toEqual([]);
    }
    expect(await snapshotIDs(repository())).not.toContain(snapshotID);
  }, 240_000);

  it('a pod that is not running has its volumes skipped with a warning; no PVB is made', async () => {
    const name = `fsb-pending-${RUN}`;
    const ns = `fsb-pending-${RUN}`;
    await kubectl(['create', 'namespace', ns]);
    await applyList([
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'stuck', namespace: ns, annotations: { 'backup.velero.io/backup-volumes': 'cache' } },
        spec: {
          nodeSelector: { 'cairn.io/fs-backup-server-test': 'no-such-node' },
          containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'], volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }],
          volumes: [{ name: 'cache', emptyDir: {} }],
        },
      },
    ]);
    await startBackup(name, [ns]);
    const done = await phaseOf(name, TERMINAL);
    expect(done.status?.phase).toBe('Completed');
    expect(done.status?.backupItemOperationsAttempted).toBeUndefined();
    expect(await pvbsOf(name)).toEqual([]);
    const results = await getJsonGz<{ warnings: { namespaces?: Record<string, string[]> } }>(backupKey(name, '-results.gz'));
    expect(results.warnings.namespaces?.[ns]?.join('\n')).toContain(`Skip pod volume cache: pod is not scheduled, name=${ns}/stuck`);
    await kubectl(['delete', 'namespace', ns, '--wait=false'], { allowFailure: true });
  }, 120_000);

  it('without a node agent on the pod\'s node the volumes are not backed up and the backup is PartiallyFailed', async () => {
    const node = (await kubectl(['-n', APP, 'get', 'pod', 'web', '-o', 'jsonpath={.spec.nodeName}'])).stdout.trim();
    await kubectl(['-n', NS, 'delete', 'pod', `stand-in-node-agent-${NODES.indexOf(node)}`, '--wait=true'], { timeoutMs: 60_000 });
    const name = `fsb-no-agent-${RUN}`;
    await startBackup(name, [APP]);
    const done = await phaseOf(name, TERMINAL);
    expect(done.status?.phase).toBe('PartiallyFailed');
    expect(await pvbsOf(name)).toEqual([]);
    const results = await getJsonGz<{ errors: { namespaces?: Record<string, string[]> } }>(backupKey(name, '-results.gz'));
    expect(results.errors.namespaces?.[APP]).toContain(`daemonset pod not found in running state in node ${node}`);
    const info = await getJsonGz<BackupVolumeInfo[]>(backupKey(name, '-volumeinfo.json.gz'));
    expect(info.find((e) => e.pvcName === 'data-pvc')).toMatchObject({ skipped: true, skippedReason: expect.stringMatching(/^podvolume: encountered a problem with backing up the PVC of pod .*daemonset pod not found/) as unknown });
  }, 120_000);
});
