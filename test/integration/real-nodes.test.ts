// Real nodes (`cluster:up -- --runtime containerd`): a cluster of its own with two kubelets on containerd and runc,
// images pulled from the test bed's registry, pod-to-pod traffic across nodes, Services through kube-proxy, the
// `kubernetes` Service reaching the API server, logs and exec through the kubelets, the CSI host-path driver
// registered with the real kubelets (snapshot and restore); and `down` leaves nothing of it on the machine:
// processes, cgroups, mounts, network namespaces, interfaces.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { down, up } from '../../tools/local-cluster/cluster.js';
import { enableCsi } from '../../tools/local-cluster/csi/enable.js';
import { hostNetworkInUse, readNetwork, type ClusterNetwork } from '../../tools/local-cluster/network.js';
import { nodeCgroupRoot } from '../../tools/local-cluster/node/real-nodes.js';
import { cacheRoot } from '../../tools/local-cluster/paths.js';
import type { ClusterState } from '../../tools/local-cluster/state.js';
import { waitFor } from '../support/wait.js';

const exec = promisify(execFile);
const log = (line: string) => process.stderr.write(`[real-nodes test] ${line}\n`);

let state: ClusterState;
let network: ClusterNetwork;

const kubectl = async (args: string[], input?: string) => {
  const child = exec(state.binaries.kubectl, ['--kubeconfig', state.kubeconfigPath, ...args], { maxBuffer: 16 * 1024 * 1024 });
  if (input !== undefined) child.child.stdin?.end(input);
  return (await child).stdout;
};

interface Pod {
  spec: { nodeName?: string };
  status: { phase?: string; podIP?: string; containerStatuses?: { ready: boolean }[] };
}

const podJson = async (name: string) => JSON.parse(await kubectl(['-n', 'default', 'get', 'pod', name, '-o', 'json'])) as Pod;

async function runningPod(name: string): Promise<Pod> {
  return waitFor(async () => {
    const p = await podJson(name);
    return p.status.phase === 'Running' && p.status.containerStatuses?.every((c) => c.ready) ? p : undefined;
  }, { timeoutMs: 90_000, description: `pod ${name} running` });
}

const pod = (name: string, node: string, command: string, labels: Record<string, string> = {}) => JSON.stringify({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: {
    nodeSelector: { 'kubernetes.io/hostname': node },
    terminationGracePeriodSeconds: 1,
    containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', command] }],
  },
});

beforeAll(async () => {
  // The global setup built the toolchain (containerd included).
  const parent = join(cacheRoot(), 'run');
  mkdirSync(parent, { recursive: true });
  const runDir = mkdtempSync(join(parent, 'test-real-nodes-'));
  // Like the global setup's cluster: a later test run stops it if this process dies without tearing it down.
  writeFileSync(join(runDir, 'owner.pid'), String(process.pid));
  const result = await up({ runDir, name: 'real-nodes', nodes: 2, runtime: 'containerd', log });
  log(`cluster with real nodes up in ${result.seconds.toFixed(1)}s`);
  state = result.state;
  network = readNetwork(runDir)!;
}, 600_000);

afterAll(async () => {
  if (state) await down({ runDir: state.runDir, keep: false });
});

describe('real nodes', () => {
  it('registers two Ready nodes that report containerd 2 as their runtime', async () => {
    const nodes = JSON.parse(await kubectl(['get', 'nodes', '-o', 'json'])) as {
      items: { metadata: { name: string }; spec: { taints?: unknown[] }; status: { nodeInfo: { containerRuntimeVersion: string; kubeletVersion: string }; addresses: { type: string; address: string }[] } }[];
    };
    expect(nodes.items.map((n) => n.metadata.name).sort()).toEqual(['local-node-1', 'local-node-2']);
    for (const n of nodes.items) {
      expect(n.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\/2\./);
      expect(n.status.nodeInfo.kubeletVersion).toBe('v1.36.3');
      expect(n.status.addresses).toContainEqual({ type: 'InternalIP', address: network.nodes.find((x) => x.name === n.metadata.name)!.ip });
    }
    const wide = await kubectl(['get', 'nodes', '-o', 'wide']);
    expect(wide).toContain('containerd://2.');
    // The node lifecycle controller lifts the not-ready taint once the kubelets report Ready.
    await waitFor(async () => {
      const again = JSON.parse(await kubectl(['get', 'nodes', '-o', 'json'])) as typeof nodes;
      return again.items.every((n) => (n.spec.taints ?? []).length === 0);
    }, { timeoutMs: 60_000, description: 'nodes without taints' });
  });

  it('runs pods from the registry on both nodes, with pod-to-pod, Service and API server traffic', async () => {
    await kubectl(['apply', '-f', '-'], pod('web', 'local-node-1', 'echo hello-from-web > /tmp/index.html && httpd -f -p 8080 -h /tmp', { app: 'web' }));
    await kubectl(['apply', '-f', '-'], pod('client', 'local-node-2', 'sleep 3600'));
    await kubectl(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    }));
    const web = await runningPod('web');
    const client = await runningPod('client');
    expect(web.spec.nodeName).toBe('local-node-1');
    expect(client.spec.nodeName).toBe('local-node-2');
    expect(web.status.podIP).toMatch(new RegExp(`^${network.nodes[0]!.podCidr.split('.').slice(0, 3).join('\\.')}\\.`));

    // exec through the API server and the kubelet; across nodes by pod IP, then through the Service's cluster IP.
    // (No -T: busybox-static 1.35's wget crashes with a timeout set.)
    const direct = await kubectl(['-n', 'default', 'exec', 'client', '--', 'wget', '-q', '-O-', `http://${web.status.podIP}:8080/index.html`]);
    expect(direct.trim()).toBe('hello-from-web');
    const clusterIp = (await kubectl(['-n', 'default', 'get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
    // Each try is a new connection, ended after 5 s: a SYN sent before kube-proxy has written the Service's rules
    // leaves a conntrack entry without the DNAT, and the same connection's retransmissions keep following it until
    // the kernel gives up (longer than this wait), even after the rules are there.
    const viaService = await waitFor(async () =>
      (await kubectl(['-n', 'default', 'exec', 'client', '--', 'timeout', '5', 'wget', '-q', '-O-', `http://${clusterIp}/index.html`])).trim(),
    { timeoutMs: 60_000, description: 'the web Service answering through kube-proxy' });
    expect(viaService).toBe('hello-from-web');

    // The `kubernetes` Service has the API server's real address as its endpoint, and pods reach it.
    const endpoints = JSON.parse(await kubectl(['get', 'endpointslices', '-n', 'default', '-l', 'kubernetes.io/service-name=kubernetes', '-o', 'json'])) as {
      items: { endpoints: { addresses: string[] }[] }[];
    };
    expect(endpoints.items[0]!.endpoints[0]!.addresses).toEqual([network.hostIp]);
    // Plain HTTP to the TLS port: the API server's own "400 Bad Request" proves the packets got there and back.
    const api = await kubectl(['-n', 'default', 'exec', 'client', '--', 'sh', '-c', 'wget -q -O- http://10.96.0.1:443/ 2>&1 || true']);
    expect(api).toContain('400 Bad Request');

    // Logs come from the container's log file through the kubelet.
    await kubectl(['-n', 'default', 'exec', 'web', '--', 'sh', '-c', 'echo to-the-log > /proc/1/fd/1']);
    await waitFor(async () => (await kubectl(['-n', 'default', 'logs', 'web'])).includes('to-the-log'),
      { timeoutMs: 15_000, description: 'pod log through the kubelet' });
  });

  it('runs Redis (a database from Debian packages, in an image made here) on a volume of the default StorageClass', async () => {
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
      {
        apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'redis-data', namespace: 'default' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
      },
      {
        apiVersion: 'v1', kind: 'Pod', metadata: { name: 'redis', namespace: 'default' },
        spec: {
          containers: [{
            name: 'redis', image: 'redis:7.0',
            readinessProbe: { exec: { command: ['redis-cli', 'PING'] }, periodSeconds: 1 },
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'redis-data' } }],
        },
      },
    ] }));
    await runningPod('redis');
    await kubectl(['-n', 'default', 'exec', 'redis', '--', 'redis-cli', 'SET', 'greeting', 'hello-from-redis']);
    expect((await kubectl(['-n', 'default', 'exec', 'redis', '--', 'redis-cli', 'GET', 'greeting'])).trim()).toBe('hello-from-redis');
    // The append-only file is on the claim's volume: what a file-system backup of the volume would carry.
    expect(await kubectl(['-n', 'default', 'exec', 'redis', '--', 'ls', '/data'])).toContain('appendonlydir');
  });

  it('runs the CSI host-path driver and snapshot stack: a volume written, snapshotted and restored into a new claim', async () => {
    const csi = await enableCsi({ state, log });
    const claim = (name: string, extra: object = {}) => ({
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: csi.storageClass, resources: { requests: { storage: '64Mi' } }, ...extra },
    });
    const once = (name: string, claimName: string, command: string[]) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: 'busybox', command, volumeMounts: [{ name: 'd', mountPath: '/data' }] }],
        volumes: [{ name: 'd', persistentVolumeClaim: { claimName } }],
      },
    });
    const succeeded = (name: string) => waitFor(async () => (await podJson(name)).status.phase === 'Succeeded',
      { timeoutMs: 120_000, description: `pod ${name} Succeeded` });
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
      claim('csi-src'), once('csi-writer', 'csi-src', ['sh', '-c', 'echo csi-data > /data/f && sync']),
    ] }));
    await succeeded('csi-writer');
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
      {
        apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'csi-snap', namespace: 'default' },
        spec: { volumeSnapshotClassName: csi.snapshotClass, source: { persistentVolumeClaimName: 'csi-src' } },
      },
      claim('csi-restored', { dataSource: { name: 'csi-snap', kind: 'VolumeSnapshot', apiGroup: 'snapshot.storage.k8s.io' } }),
      once('csi-reader', 'csi-restored', ['cat', '/data/f']),
    ] }));
    await succeeded('csi-reader');
    expect((await kubectl(['-n', 'default', 'logs', 'csi-reader'])).trim()).toBe('csi-data');
  });

  it('stops without leaving processes, cgroups, mounts, namespaces or interfaces behind', async () => {
    const runDir = state.runDir;
    await down({ runDir, keep: false });
    // Compared by whole name: another cluster's cairnbr14 must not count as this one's cairnbr1.
    const machine = { ...(await hostNetworkInUse()), mounts: readFileSync('/proc/self/mountinfo', 'utf8') };
    for (const n of network.nodes) {
      expect(machine.netns.has(n.netns)).toBe(false);
      expect(machine.links.has(n.hostVeth)).toBe(false);
      expect(existsSync(join('/sys/fs/cgroup/pids', nodeCgroupRoot(network, n.name)))).toBe(false);
    }
    expect(machine.links.has(network.bridge)).toBe(false);
    expect(machine.addresses.has(network.hostIp)).toBe(false);
    expect(machine.mounts).not.toContain(runDir);
    const leftovers = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(runDir);
      } catch {
        return false;
      }
    });
    expect(leftovers).toEqual([]);
    expect(existsSync(runDir)).toBe(false);
  });
});
