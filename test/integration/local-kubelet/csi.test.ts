/**
 * CSI snapshots on the local test bed: the test enables CSI on the cluster it runs on (building the CSI binaries
 * on a machine that lacks them), then a PVC of csi-hostpath-sc is written by one pod, snapshotted, restored into a
 * new PVC and read by a second pod, in Filesystem and Block mode; deleting the pods unpublishes and unstages.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterInfo, kubectl } from '../../support/cluster.js';
import { enableTestBedCsi } from '../../support/test-bed-csi.js';
import { waitFor } from '../../support/wait.js';
import { createNamespace, createPod, deleteNamespace, nodeOf, podLogs, waitForPodGone, waitForPhase } from './helpers.js';

const DRIVER = 'hostpath.csi.k8s.io';
let ns: string;

beforeAll(async () => {
  // A cold machine builds csi-provisioner, csi-snapshotter and snapshot-controller here (minutes, once).
  await enableTestBedCsi();
  ns = await createNamespace('lk-csi');
}, 45 * 60_000);

afterAll(async () => {
  if (ns) await deleteNamespace(ns);
});

async function apply(obj: object): Promise<void> {
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
}

async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse((await kubectl([...args, '-o', 'json'])).stdout) as T;
}

function pvc(name: string, extra: { volumeMode?: string; dataSource?: object } = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: ns },
    spec: {
      storageClassName: 'csi-hostpath-sc',
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '16Mi' } },
      ...extra,
    },
  };
}

async function snapshotOf(name: string, claim: string): Promise<void> {
  await apply({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name, namespace: ns },
    spec: { volumeSnapshotClassName: 'csi-hostpath-snapclass', source: { persistentVolumeClaimName: claim } },
  });
  await waitFor(async () => {
    const s = await getJson<{ status?: { readyToUse?: boolean } }>(['-n', ns, 'get', 'volumesnapshot', name]);
    return s.status?.readyToUse === true;
  }, { timeoutMs: 60_000, description: `VolumeSnapshot ${name} readyToUse` });
}

function mountedPaths(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '');
}

const fromSnapshot = (snapshot: string) => ({ dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: snapshot } });

describe('local kubelet: CSI volumes and snapshots', () => {
  it('registers the driver on every node (CSINode with the node ID), with a CSIDriver, StorageClass and VolumeSnapshotClass', async () => {
    const csiNodes = await getJson<{ items: { metadata: { name: string }; spec: { drivers: { name: string; nodeID: string }[] } }[] }>(['get', 'csinode']);
    for (const n of clusterInfo().nodes) {
      const entry = csiNodes.items.find((c) => c.metadata.name === n.name)?.spec.drivers.find((d) => d.name === DRIVER);
      expect(entry?.nodeID).toBe(n.name);
    }
    const driver = await getJson<{ spec: { attachRequired: boolean } }>(['get', 'csidriver', DRIVER]);
    expect(driver.spec.attachRequired).toBe(false);
    const sc = await getJson<{ provisioner: string }>(['get', 'storageclass', 'csi-hostpath-sc']);
    expect(sc.provisioner).toBe(DRIVER);
    const vsc = await getJson<{ driver: string; metadata: { labels: Record<string, string> } }>(['get', 'volumesnapshotclass', 'csi-hostpath-snapclass']);
    expect(vsc.driver).toBe(DRIVER);
    expect(vsc.metadata.labels['velero.io/csi-volumesnapshot-class']).toBe('true');
  });

  it('a file written to a CSI volume is in a snapshot restored into a new claim; deleting the pods unpublishes', async () => {
    await apply(pvc('data'));
    const writer = await createPod(ns, {
      metadata: { name: 'writer' },
      spec: {
        containers: [{
          name: 'c', image: 'busybox', command: ['sh', '-c', 'echo hello-csi > /data/file.txt && sync && sleep 3600'],
          volumeMounts: [{ name: 'd', mountPath: '/data' }],
        }],
        volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }],
      },
    });
    const running = await waitForPhase(ns, 'writer', 'Running', 90_000);
    const pv = (await getJson<{ spec: { volumeName: string } }>(['-n', ns, 'get', 'pvc', 'data'])).spec.volumeName;
    const target = join(nodeOf(running).rootDir, 'var/lib/kubelet/pods', writer.metadata?.uid ?? '', 'volumes/kubernetes.io~csi', pv, 'mount');
    // The driver published the volume at the kubelet's path on the node, and the pod wrote through it.
    await waitFor(() => existsSync(join(target, 'file.txt')) && readFileSync(join(target, 'file.txt'), 'utf8') === 'hello-csi\n',
      { timeoutMs: 30_000, description: 'file.txt in the published volume' });
    expect(mountedPaths()).toContain(target);

    await snapshotOf('snap', 'data');
    await apply(pvc('restored', fromSnapshot('snap')));
    await createPod(ns, {
      metadata: { name: 'reader' },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'c', image: 'busybox', command: ['cat', '/data/file.txt'], volumeMounts: [{ name: 'd', mountPath: '/data' }] }],
        volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'restored' } }],
      },
    });
    await waitForPhase(ns, 'reader', 'Succeeded', 90_000);
    expect(await podLogs(ns, 'reader')).toBe('hello-csi\n');

    await kubectl(['-n', ns, 'delete', 'pod', 'writer', 'reader', '--wait=false']);
    await waitForPodGone(ns, 'writer');
    await waitForPodGone(ns, 'reader');
    expect(mountedPaths().filter((m) => m.includes(`/kubernetes.io~csi/${pv}/`) || m.endsWith(`/kubernetes.io~csi/${pv}/mount`))).toEqual([]);
    // Only this cluster's staging mounts: the other test cluster beside it stages its own volumes on this machine.
    const ours = (m: string) => m.startsWith(`${clusterInfo().runDir}/`) && m.includes(`/plugins/kubernetes.io/csi/${DRIVER}/`);
    expect(mountedPaths().filter(ours)).toEqual([]);
  });

  it('block-mode claims are attached as loop devices, snapshotted and restored byte for byte', async () => {
    await apply(pvc('blk', { volumeMode: 'Block' }));
    await createPod(ns, {
      metadata: { name: 'bwriter' },
      spec: {
        restartPolicy: 'Never',
        containers: [{
          name: 'c', image: 'busybox', command: ['sh', '-c', 'printf block-data-123 | dd of=/dev/xvda conv=notrunc 2>/dev/null && sync'],
          volumeDevices: [{ name: 'd', devicePath: '/dev/xvda' }],
        }],
        volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'blk' } }],
      },
    });
    await waitForPhase(ns, 'bwriter', 'Succeeded', 90_000);
    await snapshotOf('bsnap', 'blk');
    await apply(pvc('blk-restored', { volumeMode: 'Block', ...fromSnapshot('bsnap') }));
    await createPod(ns, {
      metadata: { name: 'breader' },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'c', image: 'busybox', command: ['head', '-c', '14', '/dev/xvdb'], volumeDevices: [{ name: 'd', devicePath: '/dev/xvdb' }] }],
        volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'blk-restored' } }],
      },
    });
    await waitForPhase(ns, 'breader', 'Succeeded', 90_000);
    expect(await podLogs(ns, 'breader')).toBe('block-data-123');
  });

  it('deleting a claim deletes its volume in the driver', async () => {
    const pv = (await getJson<{ spec: { volumeName: string } }>(['-n', ns, 'get', 'pvc', 'restored'])).spec.volumeName;
    const handle = (await getJson<{ spec: { csi: { volumeHandle: string } } }>(['get', 'pv', pv])).spec.csi.volumeHandle;
    const volumeDir = join(clusterInfo().runDir, 'csi/hostpath/volumes', handle);
    expect(existsSync(volumeDir)).toBe(true);
    await kubectl(['-n', ns, 'delete', 'pvc', 'restored']);
    await waitFor(async () => !existsSync(volumeDir) && (await kubectl(['get', 'pv', pv], { allowFailure: true })).exitCode !== 0,
      { timeoutMs: 60_000, description: `volume ${handle} and PV ${pv} deleted` });
  });
});
