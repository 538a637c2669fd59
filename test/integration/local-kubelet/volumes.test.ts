/**
 * Volumes on the local nodes: PVC data survives its pod and follows the PV to the same node; each node has its
 * own volumes and pod directories, laid out as the real kubelet does; released volumes are deleted.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterInfo } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';
import {
  core,
  createPod,
  fileNamespace,
  getPod,
  nodeOf,
  nodes,
  podDirOnNode,
  podLogs,
  waitForPhase,
  waitForPodGone,
} from './helpers.js';

const ns = fileNamespace('lk-volumes');

async function createClaim(name: string): Promise<void> {
  await core().createNamespacedPersistentVolumeClaim({
    namespace: ns,
    body: { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  });
}

function pvcPod(name: string, claim: string, script: string, pin?: { nodeName?: string; nodeSelector?: Record<string, string> }) {
  return createPod(ns, {
    metadata: { name },
    spec: {
      restartPolicy: 'Never',
      ...pin,
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
      containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    },
  });
}

async function boundPv(claim: string): Promise<string> {
  return waitFor(
    async () => {
      const pvc = await core().readNamespacedPersistentVolumeClaim({ namespace: ns, name: claim });
      return pvc.status?.phase === 'Bound' ? pvc.spec?.volumeName : undefined;
    },
    { timeoutMs: 60_000, description: `claim ${claim} Bound` },
  );
}

describe('local kubelet: volumes', () => {
  it('a pod writes into a PVC; after it is deleted a new pod on the same node reads the data', async () => {
    const [, node2] = nodes();
    if (!node2) throw new Error('need two nodes');
    await createClaim('data');
    await pvcPod('writer', 'data', 'echo "kept across pods" > /data/file; sleep 3600', { nodeSelector: { 'kubernetes.io/hostname': node2.name } });
    const writer = await waitForPhase(ns, 'writer', 'Running');
    expect(writer.spec?.nodeName).toBe(node2.name);
    const pv = await boundPv('data');

    // The data is where fs-backup looks for it, and really lives in the PV directory under the node root.
    const mountDir = join(podDirOnNode(node2.rootDir, writer.metadata?.uid ?? ''), 'volumes/kubernetes.io~csi', pv, 'mount');
    await waitFor(() => existsSync(join(mountDir, 'file')), { timeoutMs: 30_000, description: 'file in the PV mount dir' });
    expect(readFileSync(join(mountDir, 'file'), 'utf8')).toBe('kept across pods\n');
    const pvObj = await core().readPersistentVolume({ name: pv });
    expect(pvObj.spec?.local?.path).toBe(join(node2.rootDir, 'pv', pv));
    expect(readFileSync(join(node2.rootDir, 'pv', pv, 'file'), 'utf8')).toBe('kept across pods\n');

    await core().deleteNamespacedPod({ namespace: ns, name: 'writer', gracePeriodSeconds: 1 });
    await waitForPodGone(ns, 'writer');
    expect(existsSync(join(node2.rootDir, 'pv', pv, 'file'))).toBe(true);

    // Not pinned: the PV's node affinity brings the reader to the same node.
    await pvcPod('reader', 'data', 'cat /data/file');
    const reader = await waitForPhase(ns, 'reader', 'Succeeded');
    expect(reader.spec?.nodeName).toBe(node2.name);
    expect(await podLogs(ns, 'reader')).toBe('kept across pods\n');
  });

  it('two nodes each have their own volumes and pod directories', async () => {
    const [node1, node2] = nodes();
    if (!node1 || !node2) throw new Error('need two nodes');
    await createClaim('one');
    await createClaim('two');
    await pvcPod('on-one', 'one', 'echo one > /data/who', { nodeSelector: { 'kubernetes.io/hostname': node1.name } });
    await pvcPod('on-two', 'two', 'echo two > /data/who', { nodeSelector: { 'kubernetes.io/hostname': node2.name } });
    await waitForPhase(ns, 'on-one', 'Succeeded');
    await waitForPhase(ns, 'on-two', 'Succeeded');
    const pvOne = await boundPv('one');
    const pvTwo = await boundPv('two');
    expect(readFileSync(join(node1.rootDir, 'pv', pvOne, 'who'), 'utf8')).toBe('one\n');
    expect(readFileSync(join(node2.rootDir, 'pv', pvTwo, 'who'), 'utf8')).toBe('two\n');
    expect(existsSync(join(node2.rootDir, 'pv', pvOne))).toBe(false);

    // A DaemonSet-style hostPath of /var/lib/kubelet/pods shows that node's pods only.
    const onTwo = await getPod(ns, 'on-two');
    const onOne = await getPod(ns, 'on-one');
    await createPod(ns, {
      metadata: { name: 'host-pods' },
      spec: {
        restartPolicy: 'Never',
        nodeName: node2.name,
        volumes: [{ name: 'host-pods', hostPath: { path: '/var/lib/kubelet/pods' } }],
        containers: [{ name: 'c', image: 'busybox', command: ['ls', '/host_pods'], volumeMounts: [{ name: 'host-pods', mountPath: '/host_pods' }] }],
      },
    });
    await waitForPhase(ns, 'host-pods', 'Succeeded');
    const listed = (await podLogs(ns, 'host-pods')).split('\n').filter(Boolean);
    expect(listed).toContain(onTwo.metadata?.uid);
    expect(listed).not.toContain(onOne.metadata?.uid);
    expect(nodeOf(onOne).name).toBe(node1.name);
  });

  it('a hostPath under the run directory is shared by all nodes (like network storage); others are per node', async () => {
    const [node1, node2] = nodes();
    if (!node1 || !node2) throw new Error('need two nodes');
    const shared = join(clusterInfo().runDir, `shared-${ns}`);
    const hostPod = (name: string, node: string, script: string) =>
      createPod(ns, {
        metadata: { name },
        spec: {
          restartPolicy: 'Never',
          nodeName: node,
          volumes: [
            { name: 'shared', hostPath: { path: shared, type: 'DirectoryOrCreate' } },
            { name: 'local', hostPath: { path: `/tmp/lk-${ns}`, type: 'DirectoryOrCreate' } },
          ],
          containers: [{
            name: 'c',
            image: 'busybox',
            command: ['sh', '-c', script],
            volumeMounts: [{ name: 'shared', mountPath: '/shared' }, { name: 'local', mountPath: '/local' }],
          }],
        },
      });
    await hostPod('put', node1.name, 'echo from-one > /shared/f; echo one > /local/f');
    await waitForPhase(ns, 'put', 'Succeeded');
    await hostPod('get', node2.name, 'cat /shared/f; ls /local');
    await waitForPhase(ns, 'get', 'Succeeded');
    expect(await podLogs(ns, 'get')).toBe('from-one\n');
    expect(readFileSync(join(shared, 'f'), 'utf8')).toBe('from-one\n');
    expect(readFileSync(join(node1.rootDir, `tmp/lk-${ns}/f`), 'utf8')).toBe('one\n');
  });

  it('a pod started before a PVC pod sees that pod volume through a hostPath of /var/lib/kubelet/pods', async () => {
    const [node1] = nodes();
    if (!node1) throw new Error('need a node');
    await createPod(ns, {
      metadata: { name: 'agent' },
      spec: {
        nodeName: node1.name,
        volumes: [{ name: 'host-pods', hostPath: { path: '/var/lib/kubelet/pods' } }],
        containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'], volumeMounts: [{ name: 'host-pods', mountPath: '/host_pods', mountPropagation: 'HostToContainer' }] }],
      },
    });
    const agent = await waitForPhase(ns, 'agent', 'Running');
    await createClaim('late');
    await pvcPod('late-writer', 'late', 'echo late > /data/f; sleep 3600', { nodeSelector: { 'kubernetes.io/hostname': node1.name } });
    const writer = await waitForPhase(ns, 'late-writer', 'Running');
    const pv = await boundPv('late');
    // Look from inside the agent's mount namespace: the bind mount made after it started must have propagated.
    const agentPid = readFileSync(join(node1.rootDir, 'pids', `${agent.metadata?.uid ?? ''}_c`), 'utf8').trim();
    const inAgent = `/proc/${agentPid}/root/host_pods/${writer.metadata?.uid ?? ''}/volumes/kubernetes.io~csi/${pv}/mount/f`;
    expect(existsSync(`/proc/${agentPid}`)).toBe(true);
    await waitFor(() => {
      try {
        return readFileSync(inAgent, 'utf8') === 'late\n';
      } catch {
        return false;
      }
    }, { timeoutMs: 30_000, description: 'PV data visible in the agent pod' });
    await core().deleteNamespacedPod({ namespace: ns, name: 'late-writer', gracePeriodSeconds: 1 });
    await core().deleteNamespacedPod({ namespace: ns, name: 'agent', gracePeriodSeconds: 1 });
    await waitForPodGone(ns, 'late-writer');
    await waitForPodGone(ns, 'agent');
  });

  it('deleting a claim deletes its volume and the data directory', async () => {
    const [node1] = nodes();
    if (!node1) throw new Error('need a node');
    await createClaim('temp');
    await pvcPod('temp-user', 'temp', 'echo x > /data/x', { nodeSelector: { 'kubernetes.io/hostname': node1.name } });
    await waitForPhase(ns, 'temp-user', 'Succeeded');
    const pv = await boundPv('temp');
    const dir = join(node1.rootDir, 'pv', pv);
    expect(readdirSync(dir)).toEqual(['x']);
    await core().deleteNamespacedPod({ namespace: ns, name: 'temp-user' });
    await waitForPodGone(ns, 'temp-user');
    await core().deleteNamespacedPersistentVolumeClaim({ namespace: ns, name: 'temp' });
    await waitFor(
      async () => {
        const gone = await core().readPersistentVolume({ name: pv }).then(() => false, (e: { code?: number }) => e.code === 404);
        return gone && !existsSync(dir);
      },
      { timeoutMs: 60_000, description: `PV ${pv} and ${dir} deleted` },
    );
  });
});
