/**
 * The server's restore side of CSI snapshot data movement against the local cluster (with CSI) and MinIO, with an
 * installed server and NO node agent: the test plays the node agent's part (it fills in the DataDownloads' status
 * and re-binds a volume to the restored claim, as the node agent does: docs/data-mover.md).
 *
 * A real backup of an app namespace with a CSI claim (csi-hostpath-sc) gets its volume info rewritten in MinIO to
 * say the claim's data was moved (what a data-mover backup records). Restoring it: the claim comes back with the
 * `velero.io/dynamic-pv-restore` selector and no volume, the PV is not restored, one DataDownload per claim exists
 * with the contract's fields, the Restore waits in WaitingForPluginOperations (also across a server restart) and
 * `restore describe --details` shows the live progress; once a volume carrying the selector's label is bound to the
 * claim and the DataDownload is Completed, the restore ends Completed with its item operations and volume info, and
 * the volume gets the backed-up reclaim policy and labels. A Failed DataDownload (into a mapped namespace) makes it
 * PartiallyFailed with an error naming the claim; a DataDownload nobody finishes is canceled at itemOperationTimeout.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBackup, newRestore, type DataDownload, type Restore } from '../../src/api/index.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import { cairn } from '../support/cli.js';
import { clusterInfo, kubeConfig, kubectl, kubectlJson } from '../support/cluster.js';
import { enableTestBedCsi } from '../support/test-bed-csi.js';
import { deletePrefix, getJsonGz, getObject, installServer, restartServer } from '../support/server-install.js';
import { completedBackup, installedLocationAvailable, restoreInPhase, rewriteVolumeInfo } from '../support/played-node-agent.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-r-${RUN}`;
const APP = `ddr-app-${RUN}`;
const COPY = `ddr-copy-${RUN}`;
const LOST = `ddr-lost-${RUN}`;
const PREFIX = `ddr-${RUN}`;
const BACKUP = 'b1';
const SNAPSHOT = 'kopia-snapshot-of-data';
/** On the volumes this test creates (and the restore labels from pvInfo), so they are cleaned up. */
const TEST_LABEL = 'ddr.cairn.test/run';

let kube: Kube;
let kubeconfig: string;
let pvcUidInBackup = '';

interface PvcJson {
  metadata: { name: string; namespace: string; uid: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { volumeName?: string; selector?: { matchLabels?: Record<string, string> }; dataSource?: unknown; storageClassName?: string; accessModes?: string[] };
  status?: { phase?: string };
}
interface PvJson {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { persistentVolumeReclaimPolicy?: string; claimRef?: { name?: string; namespace?: string; uid?: string } };
  status?: { phase?: string };
}

const getGz = async (key: string): Promise<string> => gunzipSync(await getObject(key)).toString('utf8');
const restores = () => veleroClients(kube).restores;
const dds = () => veleroClients(kube).dataDownloads;
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

const restoreIn = (name: string, phases: string[], timeoutMs?: number): Promise<Restore> => restoreInPhase(kube, NS, name, phases, timeoutMs);

async function ddOf(restore: Restore): Promise<DataDownload> {
  return waitFor(
    async () => {
      const list = await dds().list(NS, `velero.io/restore-uid=${restore.metadata.uid ?? ''}`);
      return list.length === 1 ? list[0] : undefined;
    },
    { timeoutMs: 60_000, description: `the DataDownload of restore ${restore.metadata.name ?? ''}` },
  );
}

async function setDdStatus(dd: DataDownload, status: NonNullable<DataDownload['status']>): Promise<void> {
  await dds().updateStatus(NS, dd.metadata?.name ?? '', (d) => {
    d.status = { ...(d.status ?? {}), ...status };
  });
}

/**
 * What the node agent does once the data is in a volume: a PV (here an empty hostPath one: no data mover ran)
 * carrying the claim's selector label, pre-bound to the claim, with the storage class's reclaim policy.
 */
async function rebindVolume(pvc: PvcJson, pvName: string): Promise<void> {
  const value = pvc.spec.selector?.matchLabels?.['velero.io/dynamic-pv-restore'] ?? '';
  const dir = mkdtempSync(join(tmpdir(), 'cairn-ddr-pv-'));
  await kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: pvName, labels: { 'velero.io/dynamic-pv-restore': value, [TEST_LABEL]: RUN } },
      spec: {
        capacity: { storage: '16Mi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'csi-hostpath-sc',
        volumeMode: 'Filesystem',
        hostPath: { path: dir },
        claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: pvc.metadata.namespace, name: pvc.metadata.name, uid: pvc.metadata.uid },
      },
    }),
  });
}

async function pvcIn(namespace: string): Promise<PvcJson> {
  return waitFor(async () => kubectlJson<PvcJson>(['-n', namespace, 'get', 'pvc', 'data']), { timeoutMs: 60_000, description: `claim ${namespace}/data` });
}

beforeAll(async () => {
  const info = clusterInfo();
  await enableTestBedCsi();
  kubeconfig = info.kubeconfigPath;
  kube = kubeFromConfig(kubeConfig());
  // No --use-node-agent: nothing but this test touches the DataDownloads.
  await installServer({ namespace: NS, prefix: PREFIX });

  // An app whose CSI claim is bound (WaitForFirstConsumer: a pod uses it once).
  await kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: APP } },
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'data', namespace: APP, labels: { app: 'web' } },
          spec: { storageClassName: 'csi-hostpath-sc', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } },
        },
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'writer', namespace: APP },
          spec: { restartPolicy: 'Never', containers: [{ name: 'w', image: 'busybox', command: ['sh', '-c', 'echo hello > /data/f'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] },
        },
      ],
    }),
  });
  await waitFor(async () => (await kubectlJson<PvcJson>(['-n', APP, 'get', 'pvc', 'data']))?.status?.phase === 'Bound', { timeoutMs: 120_000, description: 'app claim Bound' });
  pvcUidInBackup = (await kubectl(['-n', APP, 'get', 'pvc', 'data', '-o', 'jsonpath={.metadata.uid}'])).stdout;
  await installedLocationAvailable(NS);

  // A resource backup of the claim and its volume (no CSI snapshot), then the volume info a data-mover backup would have written.
  await completedBackup(kube, newBackup({ namespace: NS, name: BACKUP, spec: { includedNamespaces: [APP], includedResources: ['persistentvolumeclaims', 'persistentvolumes'], snapshotVolumes: false } }));
  await rewriteVolumeInfo<{ pvcName?: string; pvName?: string }>(PREFIX, BACKUP, (infos) => {
    expect(infos.map((i) => i.pvcName)).toContain('data');
    return infos.map((i) =>
      i.pvcName === 'data'
        ? {
            pvcName: 'data',
            pvcNamespace: APP,
            pvName: i.pvName,
            backupMethod: 'CSISnapshot',
            snapshotDataMoved: true,
            preserveLocalSnapshot: false,
            skipped: false,
            result: 'succeeded',
            csiSnapshotInfo: { snapshotHandle: '', size: 0, driver: 'hostpath.csi.k8s.io', vscName: '', ReadyToUse: null },
            snapshotDataMovementInfo: { dataMover: 'velero', uploaderType: 'kopia', snapshotHandle: SNAPSHOT, operationID: `du-backup.${pvcUidInBackup}`, size: 6, Phase: 'Completed' },
            pvInfo: { reclaimPolicy: 'Retain', labels: { [TEST_LABEL]: RUN, 'ddr.cairn.test/kept': 'yes' } },
          }
        : i,
    );
  });
  await kubectl(['delete', 'namespace', APP, '--wait=true', '--timeout=120s']);
}, 45 * 60_000);

afterAll(async () => {
  // Restores carry a finalizer only the server removes: delete them while it runs, or the namespace never goes.
  await kubectl(['-n', NS, 'delete', 'restores', '--all', '--wait=true', '--timeout=60s'], { allowFailure: true });
  await kubectl(['delete', 'namespace', APP, COPY, LOST, NS, '--wait=false'], { allowFailure: true });
  await kubectl(['delete', 'pv', '-l', `${TEST_LABEL}=${RUN}`, '--wait=false'], { allowFailure: true });
  await deletePrefix(`${PREFIX}/`);
});

describe('restoring claims whose data the backup moved (installed server, node agent played by the test)', () => {
  let restore: Restore;
  let dd: DataDownload;
  let pvc: PvcJson;

  it('rewrites the claim, skips its volume, creates the DataDownload and waits', async () => {
    await restores().create(newRestore({ namespace: NS, name: 'r1', spec: { backupName: BACKUP } }));
    restore = await restoreIn('r1', ['WaitingForPluginOperations'], 180_000);
    expect(restore.status?.restoreItemOperationsAttempted).toBe(1);

    pvc = await pvcIn(APP);
    expect(pvc.spec.volumeName).toBeUndefined();
    expect(pvc.spec.dataSource).toBeUndefined();
    expect(pvc.spec.storageClassName).toBe('csi-hostpath-sc');
    const selector = pvc.spec.selector?.matchLabels?.['velero.io/dynamic-pv-restore'] ?? '';
    expect(selector).toMatch(new RegExp(`^${APP}\\.data\\.[a-z0-9]{5}$`));
    expect(pvc.metadata.annotations?.['pv.kubernetes.io/bind-completed']).toBeUndefined();
    expect(pvc.metadata.labels).toMatchObject({ app: 'web', 'velero.io/restore-name': 'r1', 'velero.io/backup-name': BACKUP });
    // The backed-up volume is not restored; nothing provisions one for the claim either (it has a selector).
    expect((await kubectl(['get', 'pv', '-l', 'velero.io/restore-name=r1', '-o', 'name'])).stdout).toBe('');
    expect(pvc.status?.phase).toBe('Pending');

    dd = await ddOf(restore);
    expect(dd.metadata?.generateName).toBe('r1-');
    expect(dd.metadata?.ownerReferences).toEqual([{ apiVersion: 'velero.io/v1', kind: 'Restore', name: 'r1', uid: restore.metadata.uid, controller: true }]);
    const operationID = `dd-${restore.metadata.uid ?? ''}.${pvcUidInBackup}`.slice(0, 57);
    expect(dd.metadata?.labels).toMatchObject({ 'velero.io/restore-name': 'r1', 'velero.io/restore-uid': restore.metadata.uid });
    expect(dd.metadata?.labels?.['velero.io/async-operation-id']?.startsWith(operationID)).toBe(true);
    expect(dd.spec).toEqual({
      targetVolume: { pvc: 'data', pv: '', namespace: APP },
      backupStorageLocation: 'default',
      snapshotID: SNAPSHOT,
      sourceNamespace: APP,
      datamover: 'velero',
      operationTimeout: '4h0m0s',
    });
    // The data mover opens the repository of (location, backup-time namespace): the server made it Ready.
    expect((await kubectl(['-n', NS, 'get', 'backuprepository', `${APP}-default-kopia`, '-o', 'jsonpath={.status.phase}'])).stdout).toBe('Ready');
  }, 300_000);

  it('keeps waiting across a server restart; describe shows the live progress; the re-bound claim completes the restore', async () => {
    await restartServer(NS);
    expect((await restores().get(NS, 'r1'))?.status?.phase).toBe('WaitingForPluginOperations');
    // The restart did not start a second DataDownload.
    expect(await dds().list(NS, `velero.io/restore-uid=${restore.metadata.uid ?? ''}`)).toHaveLength(1);

    await setDdStatus(dd, { phase: 'InProgress', node: 'local-node-1', acceptedByNode: 'local-node-1', startTimestamp: now(), progress: { totalBytes: 2000, bytesDone: 500 } });
    const described = await cairn(['restore', 'describe', 'r1', '-n', NS, '--details'], { kubeconfig });
    expect(described.exitCode, described.stderr).toBe(0);
    expect(described.stdout).toMatch(/Data Movement Restores:\n\s+In Progress:\n\s+\S+\/data\n/);
    expect(described.stdout).toMatch(new RegExp(`${APP}/data:\\n\\s+Data Download:\\s+${dd.metadata?.name ?? ''}\\n\\s+Phase:\\s+In Progress\\n\\s+Node:\\s+local-node-1\\n\\s+Snapshot ID:\\s+${SNAPSHOT}\\n\\s+Progress:\\s+500 of 2000 bytes \\(25%\\)`));

    const pvName = `ddr-${RUN}-restored`;
    await rebindVolume(await pvcIn(APP), pvName);
    await setDdStatus(dd, { phase: 'Completed', completionTimestamp: now(), progress: { totalBytes: 2000, bytesDone: 2000 } });
    const done = await restoreIn('r1', ['Completed', 'PartiallyFailed'], 120_000);
    expect(done.status?.phase, JSON.stringify(done.status)).toBe('Completed');
    expect(done.status).toMatchObject({ restoreItemOperationsAttempted: 1, restoreItemOperationsCompleted: 1, restoreItemOperationsFailed: 0 });
    expect(done.status?.errors ?? 0).toBe(0);

    await waitFor(async () => (await kubectlJson<PvcJson>(['-n', APP, 'get', 'pvc', 'data']))?.status?.phase === 'Bound', { timeoutMs: 60_000, description: 'restored claim Bound' });
    expect((await pvcIn(APP)).spec.volumeName).toBe(pvName);
    // The restore finalizer gave the volume the backed-up reclaim policy and labels.
    const pv = await kubectlJson<PvJson>(['get', 'pv', pvName]);
    expect(pv?.spec.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(pv?.metadata.labels?.['ddr.cairn.test/kept']).toBe('yes');

    const dir = `${PREFIX}/restores/r1/`;
    const id = dd.metadata?.labels?.['velero.io/async-operation-id'] ?? '';
    expect(await getJsonGz(`${dir}r1-volumeinfo.json.gz`)).toEqual([
      {
        pvcName: 'data',
        pvcNamespace: APP,
        pvName,
        restoreMethod: 'CSISnapshot',
        snapshotDataMoved: true,
        snapshotDataMovementInfo: { dataMover: 'velero', uploaderType: 'kopia', snapshotHandle: SNAPSHOT, operationID: id, size: 2000, Phase: 'Completed' },
      },
    ]);
    const ops = (await getJsonGz(`${dir}restore-r1-itemoperations.json.gz`)) as { spec: Record<string, unknown>; status: Record<string, unknown> }[];
    expect(ops).toHaveLength(1);
    expect(ops[0]?.spec).toEqual({
      restoreName: 'r1',
      restoreUID: restore.metadata.uid,
      restoreItemAction: 'velero.io/csi-pvc-restorer',
      resourceIdentifier: { Group: '', Resource: 'persistentvolumeclaims', Namespace: APP, Name: 'data' },
      operationID: id,
    });
    expect(ops[0]?.status).toMatchObject({ phase: 'Completed', nCompleted: 2000, nTotal: 2000, operationUnits: 'Bytes' });
    const log = await getGz(`${dir}restore-r1-logs.gz`);
    expect(log).toContain('Waiting for 1 data downloads to complete');
    expect(log).toContain('Data downloads finished: 1 completed, 0 failed');
  }, 400_000);

  it('a Failed DataDownload makes the restore PartiallyFailed with an error naming the claim; namespace mapping keeps the source namespace', async () => {
    await restores().create(newRestore({ namespace: NS, name: 'r2', spec: { backupName: BACKUP, namespaceMapping: { [APP]: COPY } } }));
    const r2 = await restoreIn('r2', ['WaitingForPluginOperations'], 180_000);
    const dd2 = await ddOf(r2);
    expect(dd2.spec.targetVolume).toEqual({ pvc: 'data', pv: '', namespace: COPY });
    expect(dd2.spec.sourceNamespace).toBe(APP);
    expect((await pvcIn(COPY)).spec.selector?.matchLabels?.['velero.io/dynamic-pv-restore']).toMatch(new RegExp(`^${COPY}\\.data\\.`));
    await setDdStatus(dd2, { phase: 'Failed', message: 'restore pod failed: disk full', completionTimestamp: now() });
    const done = await restoreIn('r2', ['Completed', 'PartiallyFailed'], 120_000);
    expect(done.status).toMatchObject({ phase: 'PartiallyFailed', errors: 1, restoreItemOperationsCompleted: 0, restoreItemOperationsFailed: 1 });
    const results = (await getJsonGz(`${PREFIX}/restores/r2/restore-r2-results.gz`)) as { errors: { velero?: string[] } };
    expect(results.errors.velero).toEqual([`data download of persistent volume claim ${COPY}/data failed (DataDownload ${dd2.metadata?.name ?? ''}): restore pod failed: disk full`]);
    const ops = (await getJsonGz(`${PREFIX}/restores/r2/restore-r2-itemoperations.json.gz`)) as { status: { phase: string; error?: string } }[];
    expect(ops.map((o) => o.status.phase)).toEqual(['Failed']);
  }, 300_000);

  it('cancels a DataDownload still running at itemOperationTimeout; the restore ends PartiallyFailed', async () => {
    await restores().create(newRestore({ namespace: NS, name: 'r3', spec: { backupName: BACKUP, namespaceMapping: { [APP]: LOST }, itemOperationTimeout: '20s' } }));
    const r3 = await restoreIn('r3', ['WaitingForPluginOperations'], 180_000);
    const dd3 = await ddOf(r3);
    expect(dd3.spec.operationTimeout).toBe('20s');
    await setDdStatus(dd3, { phase: 'InProgress', node: 'somewhere' });
    const done = await restoreIn('r3', ['Completed', 'PartiallyFailed'], 120_000);
    expect(done.status).toMatchObject({ phase: 'PartiallyFailed', errors: 1, restoreItemOperationsFailed: 1 });
    const results = (await getJsonGz(`${PREFIX}/restores/r3/restore-r3-results.gz`)) as { errors: { velero?: string[] } };
    expect(results.errors.velero).toEqual([
      `timed out after 20s waiting for the data download of persistent volume claim ${LOST}/data (DataDownload ${dd3.metadata?.name ?? ''}, phase InProgress)`,
    ]);
    const live = await dds().get(NS, dd3.metadata?.name ?? '');
    expect(live?.spec.cancel).toBe(true);
  }, 300_000);
});
