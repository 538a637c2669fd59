/**
 * The node agent's snapshot data movement on the local cluster with CSI and MinIO, driven the way the server drives
 * it (docs/data-mover.md): the test takes the VolumeSnapshot and creates the DataUpload by hand, then a target PVC
 * with the dynamic-pv-restore selector and the DataDownload by hand. A DataUpload goes to Completed with a snapshot
 * ID and leaves none of the objects it exposed (the source snapshot survives); a DataDownload brings the bytes into
 * a new volume that ends up bound to the target PVC, where a pod that waited for it reads them. Block mode does the
 * same round trip byte for byte; a DataDownload made before its target PVC waits for it, one into a claim bound
 * already fails at once; node agents restarted in
 * the middle of a DataDownload's re-bind, and while a DataUpload runs, are replaced and their successors finish the
 * work; a canceled running DataUpload ends Canceled and cleaned up; node agents given a backupPVC make backup
 * volumes in the class, access mode and annotations it says, and given a loadAffinity move a volume's data only on a
 * node the entry of its class (the backup volume's for a DataUpload) allows (and, with `ignoreDelayBinding`, not on the
 * node a WaitForFirstConsumer target's workload was scheduled to, as they do without it); their data-mover pods take
 * Velero's cloud label, annotation and tolerations from the node agent's pod.
 */
import { randomBytes, randomFillSync } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, labelValue, newDataDownload, newDataUpload, parseDataDownload, parseDataUpload, type DataDownload, type DataUpload } from '../../src/api/index.js';
import { ORIGINAL_RECLAIM_POLICY_ANNOTATION, RESTORED_PV_ANNOTATION } from '../../src/agent/exposer/rebind.js';
import { backupContentName } from '../../src/agent/exposer/snapshot-objects.js';
import { customClient } from '../../src/kube/custom.js';
import type { Kube } from '../../src/kube/client.js';
import { clusterInfo, kubectl } from '../support/cluster.js';
import { enableTestBedCsi } from '../support/test-bed-csi.js';
import { hostpathVolumePath, type VolumeMode } from '../support/csi-volume.js';
import { sampleWhile, waitFor } from '../support/wait.js';
import { cleanUp, expectSameTree, installCairn, kube as makeKube, nodeAgentPod, readyRepository, waitForPhase, writeLargeData, writeSampleData } from './node-agent-support.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-n-${RUN}`;
const APP = `dm-app-${RUN}`;
const RESTORED = `dm-restored-${RUN}`;
const BACKUP = `backup-${RUN}`;
const BACKUP_UID = `00000000-0000-4000-8000-${RUN}${RUN}`;
const RESTORE = `restore-${RUN}`;
const RESTORE_UID = `00000000-0000-4000-9000-${RUN}${RUN}`;
const SC = 'csi-hostpath-sc';

let k: Kube;
/** The Filesystem volume's DataUpload, restored again by a later test. */
let fsUpload: DataUpload | undefined;
const dus = () => customClient<DataUpload>(k, Kinds.DataUpload, parseDataUpload);
const dds = () => customClient<DataDownload>(k, Kinds.DataDownload, parseDataDownload);

beforeAll(async () => {
  await enableTestBedCsi();
  k = makeKube();
  await installCairn({ ns: NS, prefix: `dm-node-agent-${RUN}` });
  for (const ns of [APP, RESTORED]) await kubectl(['create', 'namespace', ns]);
  await readyRepository(k, NS, APP);
}, 30 * 60_000);

afterAll(async () => {
  if (!k) return;
  if (process.env.CAIRN_TEST_KEEP_NAMESPACES !== '1') {
    // A node agent gone with its namespace cannot take its finalizers off.
    for (const client of [dus(), dds()] as const) {
      for (const o of await (client as ReturnType<typeof dus>).list(NS).catch(() => [])) {
        await (client as ReturnType<typeof dus>).patch(NS, o.metadata.name ?? '', { metadata: { finalizers: null } }).catch(() => undefined);
      }
    }
  }
  await cleanUp(k, NS, [APP, RESTORED]);
}, 120_000);

async function apply(obj: object): Promise<void> {
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
}

function claim(ns: string, name: string, opts: { mode?: VolumeMode; selectorValue?: string } = {}): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: ns },
    spec: {
      storageClassName: SC,
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '64Mi' } },
      volumeMode: opts.mode ?? 'Filesystem',
      ...(opts.selectorValue ? { selector: { matchLabels: { 'velero.io/dynamic-pv-restore': opts.selectorValue } } } : {}),
    },
  };
}

/** A busybox pod using `claimName` (mounted at /data, or as /dev/xvda for Block) running `script`, on `node` if set. */
function podUsing(ns: string, name: string, claimName: string, script: string, mode: VolumeMode = 'Filesystem', node?: string): object {
  const attach = mode === 'Block' ? { volumeDevices: [{ name: 'd', devicePath: '/dev/xvda' }] } : { volumeMounts: [{ name: 'd', mountPath: '/data' }] };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: {
      // nodeSelector, not nodeName: a pod given its node bypasses the scheduler, which picks a claim's node.
      ...(node ? { nodeSelector: { 'kubernetes.io/hostname': node } } : {}),
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', script], ...attach }],
      volumes: [{ name: 'd', persistentVolumeClaim: { claimName } }],
    },
  };
}

async function podPhase(ns: string, name: string, phase: string, timeoutMs = 120_000): Promise<void> {
  await waitFor(async () => (await k.core.readNamespacedPod({ namespace: ns, name })).status?.phase === phase, { timeoutMs, description: `pod ${ns}/${name} ${phase}` });
}

/** Where the test bed's CSI driver keeps the volume bound to a claim. */
async function volumeOnHost(ns: string, pvcName: string, mode: VolumeMode = 'Filesystem'): Promise<string> {
  const pvc = await k.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: pvcName });
  const pv = await k.core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
  return hostpathVolumePath(clusterInfo().runDir, pv.spec?.csi?.volumeHandle ?? '', mode);
}

/** A VolumeSnapshot of `pvc`, ready to use, as the server takes it. */
async function snapshot(ns: string, pvc: string): Promise<string> {
  const name = `velero-${pvc}-${randomBytes(3).toString('hex')}`;
  await apply({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name, namespace: ns, labels: { 'velero.io/backup-name': BACKUP, 'velero.io/backup-uid': BACKUP_UID } },
    spec: { volumeSnapshotClassName: 'csi-hostpath-snapclass', source: { persistentVolumeClaimName: pvc } },
  });
  await waitFor(async () => {
    const out = await kubectl(['-n', ns, 'get', 'volumesnapshot', name, '-o', 'jsonpath={.status.readyToUse}']);
    return out.stdout === 'true';
  }, { timeoutMs: 60_000, description: `VolumeSnapshot ${ns}/${name} readyToUse` });
  return name;
}

/** A DataUpload exactly as the server creates it (without the owner reference: there is no Backup object here). */
async function createDataUpload(opts: { pvc: string; volumeSnapshot: string }): Promise<DataUpload> {
  const pvc = await k.core.readNamespacedPersistentVolumeClaim({ namespace: APP, name: opts.pvc });
  const pvcUID = pvc.metadata?.uid ?? '';
  return dus().create(
    newDataUpload({
      namespace: NS,
      generateName: `${BACKUP}-`,
      labels: { 'velero.io/backup-name': BACKUP, 'velero.io/backup-uid': BACKUP_UID, 'velero.io/pvc-uid': pvcUID, 'velero.io/async-operation-id': labelValue(`du-${BACKUP_UID}.${pvcUID}`) },
      spec: {
        snapshotType: 'CSI',
        csiSnapshot: { volumeSnapshot: opts.volumeSnapshot, storageClass: SC, snapshotClass: 'csi-hostpath-snapclass', driver: 'hostpath.csi.k8s.io' },
        sourcePVC: opts.pvc,
        sourceNamespace: APP,
        backupStorageLocation: 'default',
        datamover: 'velero',
        operationTimeout: '10m0s',
      },
    }),
  );
}

async function createDataDownload(opts: { pvc: string; snapshotID: string; pvcUID: string }): Promise<DataDownload> {
  return dds().create(
    newDataDownload({
      namespace: NS,
      generateName: `${RESTORE}-`,
      labels: { 'velero.io/restore-name': RESTORE, 'velero.io/restore-uid': RESTORE_UID, 'velero.io/async-operation-id': labelValue(`dd-${RESTORE_UID}.${opts.pvcUID}`) },
      spec: {
        targetVolume: { pvc: opts.pvc, pv: '', namespace: RESTORED },
        backupStorageLocation: 'default',
        snapshotID: opts.snapshotID,
        sourceNamespace: APP,
        datamover: 'velero',
        operationTimeout: '10m0s',
      },
    }),
  );
}

/** Names of what still exists of `kind` among `names` (an empty list once all are gone). */
async function existing(kind: string, names: string[], ns?: string): Promise<string[]> {
  const r = await kubectl([...(ns ? ['-n', ns] : []), 'get', kind, ...names, '--ignore-not-found', '-o', 'name']);
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

/** Waits until the pod, PVC, VolumeSnapshot and VolumeSnapshotContent exposed for `du` are all gone. */
async function expectExposedObjectsGone(du: DataUpload): Promise<void> {
  const name = du.metadata.name ?? '';
  const content = backupContentName({ name, uid: du.metadata.uid ?? '' });
  await waitFor(
    async () => {
      const left = [...(await existing('pod,pvc,volumesnapshot', [name], NS).catch(() => ['?'])), ...(await existing('volumesnapshotcontent', [content]))];
      return left.length === 0 ? true : undefined;
    },
    { timeoutMs: 60_000, description: `the objects exposed for DataUpload ${name} deleted` },
  );
}

/** Backs up `pvc` through a DataUpload and returns it Completed. */
async function moveSnapshot(pvc: string): Promise<DataUpload> {
  const vs = await snapshot(APP, pvc);
  const du = await createDataUpload({ pvc, volumeSnapshot: vs });
  const done = await waitForPhase(() => dus().get(NS, du.metadata.name ?? ''), ['Completed', 'Failed', 'Canceled'], { timeoutMs: 180_000, description: `DataUpload ${du.metadata.name} finished` });
  expect(done.status?.phase, done.status?.message).toBe('Completed');
  expect(done.status?.snapshotID).toMatch(/^[0-9a-f]{16,}$/);
  expect(done.status?.path).toBe(`/${du.metadata.uid}`);
  expect(done.status?.progress?.totalBytes).toBeGreaterThan(0);
  expect(done.status?.progress?.bytesDone).toBe(done.status?.progress?.totalBytes);
  expect(done.status?.node).toBeTruthy();
  expect(done.status?.acceptedByNode).toBe(done.status?.node);
  expect(done.status?.completionTimestamp).toBeTruthy();
  await expectExposedObjectsGone(done);
  // The Retain copy went, the real snapshot did not: the server's source VolumeSnapshot is still ready.
  const ready = await kubectl(['-n', APP, 'get', 'volumesnapshot', vs, '-o', 'jsonpath={.status.readyToUse}']);
  expect(ready.stdout).toBe('true');
  await waitFor(async () => ((await dus().get(NS, du.metadata.name ?? ''))?.metadata.finalizers ?? []).length === 0, { timeoutMs: 30_000, description: 'DataUpload finalizer removed' });
  return done;
}

/**
 * Restores `du` into the target PVC `name` of RESTORED (created here with the selector) and waits until it is bound.
 * With `node`, the workload using the claim is scheduled there.
 */
async function restoreInto(opts: { du: DataUpload; name: string; mode: VolumeMode; readerScript: string; node?: string }): Promise<{ dd: DataDownload; reader: string }> {
  const selectorValue = `${RESTORED}.${opts.name}.${randomBytes(3).toString('hex').slice(0, 5)}`;
  await apply(claim(RESTORED, opts.name, { mode: opts.mode, selectorValue }));
  // The workload comes first and waits, Pending, for its claim.
  const reader = `${opts.name}-reader`;
  await apply(podUsing(RESTORED, reader, opts.name, opts.readerScript, opts.mode, opts.node));
  const dd = await createDataDownload({ pvc: opts.name, snapshotID: opts.du.status?.snapshotID ?? '', pvcUID: opts.du.metadata.labels?.['velero.io/pvc-uid'] ?? '' });
  const done = await waitForPhase(() => dds().get(NS, dd.metadata.name ?? ''), ['Completed', 'Failed', 'Canceled'], { timeoutMs: 180_000, description: `DataDownload ${dd.metadata.name} finished` });
  expect(done.status?.phase, done.status?.message).toBe('Completed');
  expect(done.status?.progress?.totalBytes).toBeGreaterThan(0);
  const target = await waitFor(async () => {
    const pvc = await k.core.readNamespacedPersistentVolumeClaim({ namespace: RESTORED, name: opts.name });
    return pvc.status?.phase === 'Bound' ? pvc : undefined;
  }, { timeoutMs: 60_000, description: `target PVC ${RESTORED}/${opts.name} Bound` });
  const pv = await k.core.readPersistentVolume({ name: target.spec?.volumeName ?? '' });
  expect(pv.spec?.claimRef).toMatchObject({ namespace: RESTORED, name: opts.name, uid: target.metadata?.uid });
  expect(pv.metadata?.labels?.['velero.io/dynamic-pv-restore']).toBe(selectorValue);
  // The class's reclaim policy is back once the volume is the workload's.
  expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
  expect(await existing('pod,pvc', [dd.metadata.name ?? ''], NS)).toEqual([]);
  return { dd: done, reader };
}

/** The cluster's nodes, sorted by name. */
async function nodeNames(): Promise<string[]> {
  const nodes = (await kubectl(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}'])).stdout.split(' ').filter(Boolean).sort();
  expect(nodes.length).toBeGreaterThan(1);
  return nodes;
}

describe('node-agent: snapshot data movement', () => {
  it('a DataUpload moves a CSI snapshot of a Filesystem volume; a DataDownload brings it back bound to the target PVC on the workload\'s node', async () => {
    await apply(claim(APP, 'data'));
    await apply(podUsing(APP, 'writer', 'data', 'echo written-by-a-pod > /data/from-pod.txt && sync && sleep 3600'));
    await podPhase(APP, 'writer', 'Running');
    const source = await volumeOnHost(APP, 'data');
    await waitFor(() => readFileSync(join(source, 'from-pod.txt'), 'utf8') === 'written-by-a-pod\n', { timeoutMs: 30_000, description: 'the pod wrote its file' });
    writeSampleData(join(source, 'tree'));

    const du = await moveSnapshot('data');
    fsUpload = du;
    // The target's class binds WaitForFirstConsumer: the data is moved on the node its workload is scheduled to (the
    // last one here, the first in the test of a DataDownload made before its target).
    const node = (await nodeNames()).at(-1);
    const { dd, reader } = await restoreInto({ du, name: 'data', mode: 'Filesystem', readerScript: 'cat /data/from-pod.txt /data/tree/hello.txt', ...(node ? { node } : {}) });
    expect(dd.status?.node).toBe(node);
    await podPhase(RESTORED, reader, 'Succeeded');
    const logs = await k.core.readNamespacedPodLog({ namespace: RESTORED, name: reader });
    expect(logs).toBe(`written-by-a-pod\n${readFileSync(join(source, 'tree', 'hello.txt'), 'utf8')}`);
    expectSameTree(source, await volumeOnHost(RESTORED, 'data'));
  }, 240_000);

  it('moves a Block volume there and back byte for byte', async () => {
    await apply(claim(APP, 'raw', { mode: 'Block' }));
    await apply(podUsing(APP, 'raw-writer', 'raw', 'printf block-data-123 | dd of=/dev/xvda conv=notrunc 2>/dev/null && sync', 'Block'));
    await podPhase(APP, 'raw-writer', 'Succeeded');
    const image = await volumeOnHost(APP, 'raw', 'Block');
    // Random bytes after the pod's, at 1 MiB, as the storage holds them.
    const fd = openSync(image, 'r+');
    writeSync(fd, randomFillSync(Buffer.alloc(3 << 20)), 0, 3 << 20, 1 << 20);
    closeSync(fd);

    const du = await moveSnapshot('raw');
    const { reader } = await restoreInto({ du, name: 'raw', mode: 'Block', readerScript: 'head -c 14 /dev/xvda' });
    await podPhase(RESTORED, reader, 'Succeeded');
    expect(await k.core.readNamespacedPodLog({ namespace: RESTORED, name: reader })).toBe('block-data-123');
    expect(readFileSync(await volumeOnHost(RESTORED, 'raw', 'Block')).equals(readFileSync(image))).toBe(true);
  }, 240_000);

  it('a DataDownload created before its target PVC waits for it, and for a pod using it, then restores into it on that pod\'s node', async () => {
    const du = fsUpload;
    if (!du) throw new Error('needs the Filesystem DataUpload of the first test');
    const dd = await createDataDownload({ pvc: 'late', snapshotID: du.status?.snapshotID ?? '', pvcUID: du.metadata.labels?.['velero.io/pvc-uid'] ?? '' });
    const phase = async () => (await dds().get(NS, dd.metadata.name ?? ''))?.status?.phase ?? 'New';
    await waitFor(async () => ((await dds().get(NS, dd.metadata.name ?? ''))?.metadata.finalizers ?? []).length > 0, { timeoutMs: 30_000, description: 'the node agent saw the DataDownload' });
    expect(await phase()).toBe('New');
    await apply(claim(RESTORED, 'late', { selectorValue: `${RESTORED}.late.x1y2z` }));
    // The claim binds on its first consumer, and none is scheduled: no node agent claims it while the agents look
    // again (every 3 s) for 10 s.
    await sampleWhile(new Promise((resolve) => setTimeout(resolve, 10_000)), 500, async () => expect(await phase()).toBe('New'));
    const node = (await nodeNames())[0]!;
    // The restore pod lives only while the data moves: caught while it is there, with its PVC.
    const name = dd.metadata.name ?? '';
    const exposed = waitFor(
      async () => {
        const pod = await k.core.readNamespacedPod({ namespace: NS, name }).catch(() => undefined);
        const pvc = await k.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name }).catch(() => undefined);
        return pod && pvc ? { pod, pvc } : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100, description: `the restore pod and PVC of DataDownload ${name}` },
    );
    await apply(podUsing(RESTORED, 'late-user', 'late', 'cat /data/from-pod.txt', 'Filesystem', node));
    // Placed on the workload's node by name, as Velero places it (a taint the workload tolerates cannot keep it off).
    const { pod, pvc } = await exposed;
    expect(pod.spec?.nodeName).toBe(node);
    expect(pod.spec?.affinity).toBeUndefined();
    expect(pvc.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBe(node);
    const done = await waitForPhase(() => dds().get(NS, dd.metadata.name ?? ''), ['Completed', 'Failed', 'Canceled'], { timeoutMs: 120_000, description: `DataDownload ${dd.metadata.name} finished` });
    expect(done.status?.phase, done.status?.message).toBe('Completed');
    expect(done.status?.node).toBe(node);
    await waitFor(async () => (await k.core.readNamespacedPersistentVolumeClaim({ namespace: RESTORED, name: 'late' })).status?.phase === 'Bound', { timeoutMs: 60_000, description: 'PVC late Bound' });
    await podPhase(RESTORED, 'late-user', 'Succeeded');
    expect(await k.core.readNamespacedPodLog({ namespace: RESTORED, name: 'late-user' })).toBe('written-by-a-pod\n');
  }, 180_000);

  it('a DataDownload into a claim that is bound already fails before any data moves, leaving nothing behind', async () => {
    const du = fsUpload;
    if (!du) throw new Error('needs the Filesystem DataUpload of the first test');
    await apply(claim(RESTORED, 'taken'));
    await apply(podUsing(RESTORED, 'taken-user', 'taken', 'true'));
    await podPhase(RESTORED, 'taken-user', 'Succeeded');
    const dd = await createDataDownload({ pvc: 'taken', snapshotID: du.status?.snapshotID ?? '', pvcUID: du.metadata.labels?.['velero.io/pvc-uid'] ?? '' });
    const done = await waitForPhase(() => dds().get(NS, dd.metadata.name ?? ''), ['Completed', 'Failed', 'Canceled'], { timeoutMs: 60_000, description: `DataDownload ${dd.metadata.name} finished` });
    expect(done.status?.phase).toBe('Failed');
    expect(done.status?.message).toMatch(new RegExp(`^error to expose DD: target PVC ${RESTORED}/taken is already bound to PV pvc-`));
    expect(await existing('pod,pvc', [dd.metadata.name ?? ''], NS)).toEqual([]);
  }, 120_000);

  it('node agents restarted in the middle of a re-bind are replaced, and their successors finish it', async () => {
    const du = fsUpload;
    if (!du) throw new Error('needs the Filesystem DataUpload of the first test');
    const selectorValue = `${RESTORED}.again.q7w8e`;
    await apply(claim(RESTORED, 'again', { selectorValue }));
    // The workload using the claim, scheduled (WaitForFirstConsumer), so the data is moved on its node.
    await apply(podUsing(RESTORED, 'again-user', 'again', 'true'));
    const dd = await createDataDownload({ pvc: 'again', snapshotID: du.status?.snapshotID ?? '', pvcUID: du.metadata.labels?.['velero.io/pvc-uid'] ?? '' });
    const name = dd.metadata.name ?? '';
    // A pod of our own using the restore PVC keeps it from going away, so the re-bind stops at "wait until the PV is
    // Released" for as long as the test wants.
    await waitFor(async () => (await existing('pvc', [name], NS)).length === 1, { timeoutMs: 60_000, description: `restore PVC ${NS}/${name}` });
    await apply(podUsing(NS, 'hold-restore-pvc', name, 'sleep 3600'));
    const held = await waitFor(async () => {
      const o = await dds().get(NS, name);
      const pvName = o?.metadata.annotations?.[RESTORED_PV_ANNOTATION];
      if (!pvName) return undefined;
      const pv = await k.core.readPersistentVolume({ name: pvName });
      const pvc = await k.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name }).catch(() => undefined);
      return pv.spec?.persistentVolumeReclaimPolicy === 'Retain' && pvc?.metadata?.deletionTimestamp ? { dd: o, pv } : undefined;
    }, { timeoutMs: 120_000, description: `DataDownload ${name} in its re-bind, waiting for the PV to be Released` });
    expect(held.dd?.status?.phase).toBe('InProgress');
    expect(held.pv.metadata?.annotations?.[ORIGINAL_RECLAIM_POLICY_ANNOTATION]).toBe('Delete');

    const agents = await k.core.listNamespacedPod({ namespace: NS, labelSelector: 'name=node-agent' });
    for (const p of agents.items) await k.core.deleteNamespacedPod({ namespace: NS, name: p.metadata?.name ?? '', gracePeriodSeconds: 0 });
    await kubectl(['-n', NS, 'rollout', 'status', 'daemonset/node-agent', '--timeout=120s'], { timeoutMs: 130_000 });
    await kubectl(['-n', NS, 'delete', 'pod', 'hold-restore-pvc', '--grace-period=1']);

    const done = await waitForPhase(() => dds().get(NS, name), ['Completed', 'Failed', 'Canceled'], { timeoutMs: 120_000, description: `DataDownload ${name} finished` });
    expect(done.status?.phase, done.status?.message).toBe('Completed');
    const target = await k.core.readNamespacedPersistentVolumeClaim({ namespace: RESTORED, name: 'again' });
    expect(target.status?.phase).toBe('Bound');
    expect(target.spec?.volumeName).toBe(held.pv.metadata?.name);
    const pv = await k.core.readPersistentVolume({ name: held.pv.metadata?.name ?? '' });
    expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
    expect(pv.metadata?.labels?.['velero.io/dynamic-pv-restore']).toBe(selectorValue);
    expect(readFileSync(join(await volumeOnHost(RESTORED, 'again'), 'from-pod.txt'), 'utf8')).toBe('written-by-a-pod\n');
  }, 240_000);

  it('a node agent deleted while its DataUpload runs is replaced, and the new one completes it', async () => {
    await apply(claim(APP, 'resume'));
    await apply(podUsing(APP, 'resume-writer', 'resume', 'sync'));
    await podPhase(APP, 'resume-writer', 'Succeeded');
    writeLargeData(await volumeOnHost(APP, 'resume'), 256);
    const du = await createDataUpload({ pvc: 'resume', volumeSnapshot: await snapshot(APP, 'resume') });
    const name = du.metadata.name ?? '';
    const running = await waitForPhase(() => dus().get(NS, name), ['InProgress', 'Completed', 'Failed'], { timeoutMs: 120_000, description: `DataUpload ${name} InProgress` });
    expect(running.status?.phase).toBe('InProgress');
    const agent = await nodeAgentPod(k, NS, running.status?.node ?? '');
    await k.core.deleteNamespacedPod({ namespace: NS, name: agent.metadata?.name ?? '', gracePeriodSeconds: 0 });
    const done = await waitForPhase(() => dus().get(NS, name), ['Completed', 'Failed', 'Canceled'], { timeoutMs: 180_000, description: `DataUpload ${name} finished` });
    expect(done.status?.phase, done.status?.message).toBe('Completed');
    expect(done.status?.snapshotID).toBeTruthy();
    expect(done.status?.progress?.totalBytes).toBeGreaterThanOrEqual(256 << 20);
    await expectExposedObjectsGone(done);
  }, 240_000);

  it('a DataUpload canceled while running ends Canceled and its exposed objects are deleted', async () => {
    await apply(claim(APP, 'big'));
    await apply(podUsing(APP, 'big-writer', 'big', 'sync'));
    await podPhase(APP, 'big-writer', 'Succeeded');
    writeLargeData(await volumeOnHost(APP, 'big'), 384);
    const vs = await snapshot(APP, 'big');
    const du = await createDataUpload({ pvc: 'big', volumeSnapshot: vs });
    const name = du.metadata.name ?? '';
    await waitFor(async () => (await dus().get(NS, name))?.status?.phase === 'InProgress', { timeoutMs: 120_000, intervalMs: 100, description: `DataUpload ${name} InProgress` });
    await dus().patch(NS, name, { spec: { cancel: true } });
    const done = await waitForPhase(() => dus().get(NS, name), ['Completed', 'Failed', 'Canceled'], { timeoutMs: 120_000, description: `DataUpload ${name} finished` });
    expect(done.status?.phase, done.status?.message).toBe('Canceled');
    await expectExposedObjectsGone(done);
  }, 240_000);

  // Last: it restarts the node agents with a ConfigMap the tests above do not expect.
  it("node agents restarted with a loadAffinity and a backupPVC make backup volumes as asked and move data only on the nodes each volume's class allows; their pods pass Velero's cloud settings on, and the ConfigMap's pod annotations", async () => {
    const nodes = await nodeNames();
    const first = nodes[0]!;
    const last = nodes.at(-1)!;
    // A second class of the same driver, for the backup volumes of SC's volumes.
    const backupSc = `backup-sc-${RUN}`;
    const sc = JSON.parse((await kubectl(['get', 'storageclass', SC, '-o', 'json'])).stdout) as { provisioner: string; parameters?: Record<string, string>; volumeBindingMode?: string };
    await apply({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: backupSc }, provisioner: sc.provisioner, parameters: sc.parameters ?? {}, reclaimPolicy: 'Delete', volumeBindingMode: sc.volumeBindingMode ?? 'Immediate' });
    try {
      const byHostname = (node: string) => ({ matchLabels: { 'kubernetes.io/hostname': node } });
      // Backup volumes are made in backupSc, whose own entry sends them to the last node; a restore volume is made in
      // SC, which has no entry: the first entry naming no class sends it to the first node, even when its workload is
      // scheduled to the last one (SC binds WaitForFirstConsumer; ignoreDelayBinding lets the load affinity decide).
      const config = {
        loadAffinity: [{ nodeSelector: byHostname(first) }, { nodeSelector: byHostname(last), storageClass: backupSc }],
        backupPVC: { [SC]: { storageClass: backupSc, readOnly: true, annotations: { 'cairn.test/backup-pvc': RUN } } },
        restorePVC: { ignoreDelayBinding: true },
        // Annotations of the ConfigMap's own replace the node agent's; with no podLabels its label is still passed on.
        podAnnotations: { 'cairn.test/configured': RUN },
      };
      await kubectl(['-n', NS, 'create', 'configmap', 'node-agent-config', `--from-literal=config.json=${JSON.stringify(config)}`]);
      const arg = { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--node-agent-configmap=node-agent-config' };
      await kubectl(['-n', NS, 'patch', 'daemonset', 'node-agent', '--type', 'json', '-p', JSON.stringify([arg])]);
      // Cloud settings Velero passes on from the node agent to its data movers (and one it does not).
      const cloud = {
        metadata: { labels: { 'azure.workload.identity/use': 'true' }, annotations: { 'iam.amazonaws.com/role': `role-${RUN}`, 'cairn.test/not-passed-on': 'x' } },
        spec: { tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }, { key: 'cairn.test/not-passed-on', operator: 'Exists' }] },
      };
      await kubectl(['-n', NS, 'patch', 'daemonset', 'node-agent', '--type', 'merge', '-p', JSON.stringify({ spec: { template: cloud } })]);
      await kubectl(['-n', NS, 'rollout', 'status', 'daemonset/node-agent', '--timeout=240s'], { timeoutMs: 250_000 });

      // Twice each way: a node chosen by chance would be the expected one only a quarter of the time.
      for (const round of [1, 2]) {
        // The backup PVC lives only while its DataUpload runs: caught while it is there.
        const backupVolume = waitFor(
          async () => (await k.core.listNamespacedPersistentVolumeClaim({ namespace: NS, labelSelector: 'velero.io/data-upload' })).items[0],
          { timeoutMs: 180_000, intervalMs: 100, description: 'the backup PVC of the DataUpload' },
        );
        const backupPod = waitFor(
          async () => (await k.core.listNamespacedPod({ namespace: NS, labelSelector: 'velero.io/data-upload' })).items[0],
          { timeoutMs: 180_000, intervalMs: 100, description: 'the backup pod of the DataUpload' },
        );
        const du = await moveSnapshot('data');
        expect(du.status?.node).toBe(last);
        const pvc = await backupVolume;
        expect(pvc.spec?.storageClassName).toBe(backupSc);
        expect(pvc.spec?.accessModes).toEqual(['ReadOnlyMany']);
        expect(pvc.metadata?.annotations?.['cairn.test/backup-pvc']).toBe(RUN);
        const pod = await backupPod;
        expect(pod.spec?.volumes?.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim).toEqual({ claimName: du.metadata.name, readOnly: true });
        expect(pod.metadata?.labels?.['azure.workload.identity/use']).toBe('true');
        expect(pod.metadata?.annotations).toEqual({ 'cairn.test/configured': RUN });
        expect(pod.spec?.tolerations?.filter((t) => t.key === 'CriticalAddonsOnly' || t.key === 'cairn.test/not-passed-on')).toEqual([{ key: 'CriticalAddonsOnly', operator: 'Exists' }]);
        const { dd } = await restoreInto({ du, name: `affine-${round}`, mode: 'Filesystem', readerScript: 'cat /data/from-pod.txt', ...(round === 1 ? {} : { node: last }) });
        expect(dd.status?.node).toBe(first);
      }
    } finally {
      await kubectl(['delete', 'storageclass', backupSc, '--ignore-not-found']);
    }
  }, 600_000);
});
