/**
 * The server's restore side of fs-backup against the local cluster and MinIO, with an installed server. The node
 * agent is kept out of the way (its DaemonSet selects no node) and stand-in pods labelled like node-agent pods run on
 * every node, so the server sees a node agent everywhere while this test plays its part: it writes the done marker
 * `.velero/<restore UID>` into the restored pod's volumes on the node and sets the PodVolumeRestores' status.
 *
 * A real backup of an app namespace (a pod with a PVC and an emptyDir, under PodSecurity `restricted`) gets a
 * `-podvolumebackups.json.gz` added in MinIO. Restoring it: the pod comes back with the `restore-wait` init container,
 * one PVR per volume exists, the Restore waits in WaitingForPluginOperations (also across a server restart), the pod
 * starts once the markers are there, and the Restore ends Completed with its volume info. A second restore into a
 * mapped namespace with a Failed PVR ends PartiallyFailed with the error.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBackup, newRestore, type PodVolumeRestore, type Restore } from '../../src/api/index.js';
import { writeCompletionMarker } from '../../src/agent/microservice/completion-marker.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import { clusterInfo, kubeConfig, kubectl, kubectlJson, s3Client } from '../support/cluster.js';
import { deletePrefix, getJsonGz, installServer, restartServer, standInNodeAgents } from '../support/server-install.js';
import { completedBackup, installedLocationAvailable, restoreInPhase, rewriteVolumeInfo } from '../support/played-node-agent.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-c-${RUN}`;
const APP = `fsr-app-${RUN}`;
const COPY = `fsr-copy-${RUN}`;
const LOST = `fsr-lost-${RUN}`;
const PREFIX = `fsr-${RUN}`;
const BACKUP = 'b1';
const IMAGE = 'ghcr.io/cairn-backup/cairn:dev';

let kube: Kube;
const bucket = () => clusterInfo().s3.bucket;

type PodJson = {
  metadata: { name: string; uid: string; namespace: string };
  spec: { nodeName?: string; initContainers?: Record<string, unknown>[]; volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[] };
  status?: { phase?: string; initContainerStatuses?: { name: string; state?: Record<string, unknown> }[] };
};

const restricted = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } };

const restores = () => veleroClients(kube).restores;
const pvrClient = () => veleroClients(kube).podVolumeRestores;

const restoreIn = (name: string, phases: string[], timeoutMs?: number): Promise<Restore> => restoreInPhase(kube, NS, name, phases, timeoutMs);

async function pvrsOf(restore: Restore, count: number): Promise<PodVolumeRestore[]> {
  return waitFor(
    async () => {
      const list = await pvrClient().list(NS, `velero.io/restore-uid=${restore.metadata.uid ?? ''}`);
      return list.length === count ? list.sort((a, b) => a.spec.volume.localeCompare(b.spec.volume)) : undefined;
    },
    { timeoutMs: 120_000, description: `${count} PVRs of restore ${restore.metadata.name ?? ''}` },
  );
}

/** The host directory of a pod volume on its node (docs/test-bed.md, Volumes). */
async function hostPathOf(pod: PodJson, volume: string): Promise<string> {
  const node = clusterInfo().nodes.find((n) => n.name === pod.spec.nodeName);
  if (!node) throw new Error(`pod ${pod.metadata.name} is on unknown node ${pod.spec.nodeName ?? '(none)'}`);
  const podDir = join(node.rootDir, 'var/lib/kubelet/pods', pod.metadata.uid, 'volumes');
  const source = pod.spec.volumes?.find((v) => v.name === volume);
  if (source?.persistentVolumeClaim) {
    const pv = (await kubectl(['-n', pod.metadata.namespace, 'get', 'pvc', source.persistentVolumeClaim.claimName, '-o', 'jsonpath={.spec.volumeName}'])).stdout;
    return join(podDir, 'kubernetes.io~csi', pv, 'mount');
  }
  return join(podDir, 'kubernetes.io~empty-dir', volume);
}

/** What the node agent would do when a PVR's data mover is done. */
async function completePvr(pvr: PodVolumeRestore, restoreUID: string): Promise<void> {
  const ns = pvr.spec.pod.namespace ?? '';
  // The node agent starts only once restore-wait runs, i.e. the pod is scheduled and its volumes are mounted.
  const pod = await waitFor(
    async () => {
      const p = await kubectlJson<PodJson>(['-n', ns, 'get', 'pod', pvr.spec.pod.name ?? '']);
      return p?.status?.initContainerStatuses?.[0]?.state?.running ? p : undefined;
    },
    { timeoutMs: 120_000, description: `restore-wait of ${ns}/${pvr.spec.pod.name ?? ''} running` },
  );
  writeCompletionMarker(await hostPathOf(pod, pvr.spec.volume), restoreUID);
  await setPvrStatus(pvr, pod, { phase: 'Completed', progress: { totalBytes: 4096, bytesDone: 4096 } });
}

async function setPvrStatus(pvr: PodVolumeRestore, pod: PodJson, status: NonNullable<PodVolumeRestore['status']>): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await pvrClient().updateStatus(NS, pvr.metadata?.name ?? '', (p) => {
    p.status = { ...(p.status ?? {}), node: pod.spec.nodeName ?? '', startTimestamp: now, completionTimestamp: now, ...status };
  });
}

async function appPod(namespace: string): Promise<PodJson> {
  return waitFor(async () => kubectlJson<PodJson>(['-n', namespace, 'get', 'pod', 'web-0']), { timeoutMs: 120_000, description: `pod ${namespace}/web-0` });
}

beforeAll(async () => {
  const info = clusterInfo();
  kube = kubeFromConfig(kubeConfig());
  await installServer({ namespace: NS, prefix: PREFIX, args: ['--use-node-agent'] });
  // The real node agent stays away; stand-ins (owned by a ConfigMap, so the DaemonSet does not adopt them) say
  // "a node agent runs here" on every node.
  await kubectl(['-n', NS, 'patch', 'daemonset', 'node-agent', '--type=merge', '-p', JSON.stringify({ spec: { template: { spec: { nodeSelector: { 'cairn.test/no-such-node': 'true' } } } } })]);
  await standInNodeAgents(NS, info.nodes.map((n) => n.name), (node) => `stand-in-${node}`);

  await kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: APP, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
        { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: APP }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Mi' } } } },
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'web-0', namespace: APP, labels: { app: 'web' } },
          spec: {
            containers: [{ name: 'web', image: 'busybox', command: ['sleep', '3600'], securityContext: restricted, volumeMounts: [{ name: 'data', mountPath: '/data' }, { name: 'scratch', mountPath: '/scratch' }] }],
            volumes: [
              { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
              { name: 'scratch', emptyDir: {} },
            ],
          },
        },
      ],
    }),
  });
  await waitFor(async () => (await kubectlJson<PodJson>(['-n', APP, 'get', 'pod', 'web-0']))?.status?.phase === 'Running', { timeoutMs: 120_000, description: 'app pod Running' });
  await installedLocationAvailable(NS);

  // A resource backup of the app, then the pod volume backups a fs-backup would have recorded.
  await completedBackup(kube, newBackup({ namespace: NS, name: BACKUP, spec: { includedNamespaces: [APP] } }));
  const pvb = (volume: string, snapshotID: string) => ({
    apiVersion: 'velero.io/v1',
    kind: 'PodVolumeBackup',
    metadata: { name: `${BACKUP}-${volume}`, namespace: NS, labels: { 'velero.io/backup-name': BACKUP } },
    spec: { node: 'n', pod: { kind: 'Pod', namespace: APP, name: 'web-0', uid: 'old-uid' }, volume, backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia', tags: {} },
    status: { phase: 'Completed', snapshotID, progress: { totalBytes: 4096, bytesDone: 4096 } },
  });
  await s3Client().send(
    new PutObjectCommand({
      Bucket: bucket(),
      Key: `${PREFIX}/backups/${BACKUP}/${BACKUP}-podvolumebackups.json.gz`,
      Body: gzipSync(JSON.stringify([pvb('data', 'snap-data'), pvb('scratch', 'snap-scratch')])),
    }),
  );
  // The claim's volume as fs-backup records it: restored by provisioning anew, then given back its policy and labels.
  await rewriteVolumeInfo<{ pvcName?: string }>(PREFIX, BACKUP, (infos) =>
    infos.map((i) =>
      i.pvcName === 'data'
        ? { ...i, backupMethod: 'PodVolumeBackup', skipped: false, skippedReason: undefined, pvInfo: { reclaimPolicy: 'Retain', labels: { 'fsr.cairn.test/kept': 'yes' } } }
        : i,
    ),
  );
  await kubectl(['delete', 'namespace', APP, '--wait=true', '--timeout=120s']);
}, 400_000);

afterAll(async () => {
  await kubectl(['delete', 'namespace', APP, COPY, LOST, NS, '--wait=false'], { allowFailure: true });
  // Volumes the restore set to Retain stay behind their claims otherwise.
  await kubectl(['delete', 'pv', '-l', 'fsr.cairn.test/kept=yes', '--wait=false'], { allowFailure: true });
  await deletePrefix(`${PREFIX}/`);
});

describe('restoring pods with fs-backup volumes (installed server, node agent played by the test)', () => {
  let restore: Restore;
  let pvrs: PodVolumeRestore[];
  let pod: PodJson;

  it('restores the pod with restore-wait in front, one PVR per volume, and waits', async () => {
    await restores().create(newRestore({ namespace: NS, name: 'r1', spec: { backupName: BACKUP } }));
    restore = await restoreIn('r1', ['WaitingForPluginOperations'], 180_000);
    expect(restore.status?.restoreItemOperationsAttempted).toBe(2);
    pod = await appPod(APP);

    const init = pod.spec.initContainers ?? [];
    expect(init.map((c) => c.name)).toEqual(['restore-wait']);
    expect(init[0]).toMatchObject({
      name: 'restore-wait',
      image: IMAGE,
      command: ['/cairn'],
      args: ['restore-helper', restore.metadata.uid],
      env: [
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
        { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      ],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '100m', memory: '128Mi' } },
      // Copied from the app container, which PodSecurity `restricted` admitted.
      securityContext: restricted,
    });
    // (The API server adds the service-account token mount to every container.)
    const mounts = (init[0]?.volumeMounts as { name: string; mountPath: string }[]).filter((m) => !m.name.startsWith('kube-api-access-'));
    expect(mounts.map((m) => [m.name, m.mountPath])).toEqual([
      ['data', '/restores/data'],
      ['scratch', '/restores/scratch'],
    ]);

    pvrs = await pvrsOf(restore, 2);
    const pvcUID = (await kubectl(['-n', APP, 'get', 'pvc', 'data', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    for (const [i, pvr] of pvrs.entries()) {
      const volume = ['data', 'scratch'][i] ?? '';
      expect(pvr.metadata?.generateName).toBe('r1-');
      expect(pvr.metadata?.ownerReferences).toEqual([{ apiVersion: 'velero.io/v1', kind: 'Restore', name: 'r1', uid: restore.metadata.uid, controller: true }]);
      expect(pvr.metadata?.labels).toEqual({
        'velero.io/restore-name': 'r1',
        'velero.io/restore-uid': restore.metadata.uid,
        'velero.io/pod-uid': pod.metadata.uid,
        ...(volume === 'data' ? { 'velero.io/pvc-uid': pvcUID } : {}),
      });
      expect(pvr.spec).toEqual({
        pod: { kind: 'Pod', namespace: APP, name: 'web-0', uid: pod.metadata.uid },
        volume,
        backupStorageLocation: 'default',
        repoIdentifier: '',
        uploaderType: 'kopia',
        snapshotID: `snap-${volume}`,
        sourceNamespace: APP,
      });
    }
    // The repository of the source namespace was ensured before the PVRs were created.
    expect((await kubectl(['-n', NS, 'get', 'backuprepository', `${APP}-default-kopia`, '-o', 'jsonpath={.status.phase}'])).stdout).toBe('Ready');
  }, 300_000);

  it('keeps waiting across a server restart, then the pod starts once the data is in and the restore completes', async () => {
    await restartServer(NS);
    // Still waiting: nothing has finished the PVRs.
    expect((await restores().get(NS, 'r1'))?.status?.phase).toBe('WaitingForPluginOperations');
    expect((await appPod(APP)).status?.phase).toBe('Pending');

    for (const pvr of pvrs) await completePvr(pvr, restore.metadata.uid ?? '');
    await waitFor(async () => (await appPod(APP)).status?.phase === 'Running', { timeoutMs: 120_000, description: 'restored pod Running after restore-wait' });
    const done = await restoreIn('r1', ['Completed', 'PartiallyFailed'], 120_000);
    expect(done.status?.phase, JSON.stringify(done.status)).toBe('Completed');
    expect(done.status).toMatchObject({ restoreItemOperationsAttempted: 2, restoreItemOperationsCompleted: 2, restoreItemOperationsFailed: 0 });
    expect(done.status?.errors ?? 0).toBe(0);
    expect(done.status?.completionTimestamp).toBeTruthy();

    const dir = `${PREFIX}/restores/r1/`;
    expect(await getJsonGz(`${dir}r1-volumeinfo.json.gz`)).toEqual([
      {
        pvcName: 'data',
        pvcNamespace: APP,
        restoreMethod: 'PodVolumeRestore',
        snapshotDataMoved: false,
        pvrInfo: { snapshotHandle: 'snap-data', size: 4096, uploaderType: 'kopia', volumeName: 'data', podName: 'web-0', podNamespace: APP, Phase: '' },
      },
      {
        restoreMethod: 'PodVolumeRestore',
        snapshotDataMoved: false,
        pvrInfo: { snapshotHandle: 'snap-scratch', size: 4096, uploaderType: 'kopia', volumeName: 'scratch', podName: 'web-0', podNamespace: APP, Phase: '' },
      },
    ]);
    // The claim's new volume has the backed-up reclaim policy and labels again.
    const pvName = (await kubectl(['-n', APP, 'get', 'pvc', 'data', '-o', 'jsonpath={.spec.volumeName}'])).stdout;
    const pv = await kubectlJson<{ metadata: { labels?: Record<string, string> }; spec: { persistentVolumeReclaimPolicy: string } }>(['get', 'pv', pvName]);
    expect(pv?.spec.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(pv?.metadata.labels?.['fsr.cairn.test/kept']).toBe('yes');
    const ops = (await getJsonGz(`${dir}restore-r1-itemoperations.json.gz`)) as { status: { phase: string } }[];
    expect(ops.map((o) => o.status.phase)).toEqual(['Completed', 'Completed']);
    expect(await getJsonGz(`${dir}restore-r1-results.gz`)).toMatchObject({ errors: {} });
    const res = await s3Client().send(new GetObjectCommand({ Bucket: bucket(), Key: `${dir}restore-r1-logs.gz` }));
    const log = gunzipSync(Buffer.from(await (res.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray())).toString('utf8');
    expect(log).toContain('Waiting for 2 pod volume restores to complete');
    expect(log).toContain('Pod volume restores finished: 2 completed, 0 failed');
  }, 400_000);

  it('a Failed PVR makes the restore PartiallyFailed with the error; namespace mapping keeps the source namespace', async () => {
    await restores().create(newRestore({ namespace: NS, name: 'r2', spec: { backupName: BACKUP, namespaceMapping: { [APP]: COPY } } }));
    const r2 = await restoreIn('r2', ['WaitingForPluginOperations'], 180_000);
    const list = await pvrsOf(r2, 2);
    expect(list.map((p) => [p.spec.pod.namespace, p.spec.sourceNamespace])).toEqual([
      [COPY, APP],
      [COPY, APP],
    ]);
    await completePvr(list[0]!, r2.metadata.uid ?? '');
    await setPvrStatus(list[1]!, await appPod(COPY), { phase: 'Failed', message: 'data path restore failed: disk full' });
    const done = await restoreIn('r2', ['Completed', 'PartiallyFailed'], 120_000);
    expect(done.status?.phase).toBe('PartiallyFailed');
    expect(done.status).toMatchObject({ errors: 1, restoreItemOperationsCompleted: 1, restoreItemOperationsFailed: 1 });
    const results = (await getJsonGz(`${PREFIX}/restores/r2/restore-r2-results.gz`)) as { errors: { velero?: string[] } };
    expect(results.errors.velero).toEqual(['pod volume restore failed: data path restore failed: disk full']);
    // restore-wait still waits for the volume that never got its data.
    expect((await appPod(COPY)).status?.phase).toBe('Pending');
  }, 400_000);

  it('gives up on PVRs whose pod has no node agent, and on PVRs past itemOperationTimeout', async () => {
    // A short resource timeout bounds the wait for a node agent; the stand-ins go away.
    await kubectl(['-n', NS, 'patch', 'deployment', 'cairn', '--type=json', '-p', JSON.stringify([{ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--resource-timeout=15s' }])]);
    await kubectl(['-n', NS, 'rollout', 'status', 'deployment/cairn', '--timeout=120s']);
    await kubectl(['-n', NS, 'delete', 'pod', '-l', 'role=node-agent', '--wait=true']);

    await restores().create(newRestore({ namespace: NS, name: 'r3', spec: { backupName: BACKUP, namespaceMapping: { [APP]: LOST }, itemOperationTimeout: '30s' } }));
    const r3 = await restoreIn('r3', ['WaitingForPluginOperations'], 180_000);
    const [data, scratch] = await pvrsOf(r3, 2);
    // A node agent took `data` and then went silent: only the operation timeout ends that wait.
    await pvrClient().updateStatus(NS, data?.metadata?.name ?? '', (p) => {
      p.status = { phase: 'InProgress', node: 'somewhere' };
    });
    const done = await restoreIn('r3', ['Completed', 'PartiallyFailed'], 120_000);
    expect(done.status).toMatchObject({ phase: 'PartiallyFailed', errors: 2, restoreItemOperationsFailed: 2 });
    const node = (await appPod(LOST)).spec.nodeName ?? '';
    const results = (await getJsonGz(`${PREFIX}/restores/r3/restore-r3-results.gz`)) as { errors: { velero?: string[] } };
    expect(results.errors.velero).toEqual(
      expect.arrayContaining([
        `node-agent pod is not running in node ${node}`,
        expect.stringMatching(/^timed out after 30s waiting for pod volume restore r3-\w+ \(volume data of pod .*\/web-0\) \(phase InProgress\)$/) as unknown,
      ]),
    );
    // Both PVRs are canceled so no node agent starts them later, and say why.
    for (const pvr of [data, scratch]) {
      const live = await pvrClient().get(NS, pvr?.metadata?.name ?? '');
      expect(live?.spec.cancel).toBe(true);
      expect(live?.metadata?.annotations?.['restore.cairn.io/pod-volume-error']).toBeTruthy();
    }
  }, 400_000);
});
