import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { csiManifests } from '../../../tools/local-cluster/csi/manifests.js';
import { createCommands, planNetwork, preferredIndex, MAX_NETWORKS } from '../../../tools/local-cluster/network.js';
import {
  cniConfig, containerdConfig, KUBELET_ROOT_DIR, kubeletArgs, kubeletConfig, kubeProxyConfig, registryHostsToml, type NodePlan,
} from '../../../tools/local-cluster/node/node-config.js';

const plan: NodePlan = {
  name: 'local-node-1',
  rootDir: '/run-dir/nodes/local-node-1',
  ip: '10.200.7.2',
  podCidr: '10.107.1.0/24',
  clusterCidr: '10.107.0.0/16',
  cgroupRoot: '/cairn7-local-node-1',
  kubeconfigPath: '/run-dir/admin.kubeconfig',
  caFile: '/run-dir/pki/ca.crt',
  kubeletCert: '/run-dir/pki/kubelet.crt',
  kubeletKey: '/run-dir/pki/kubelet.key',
  registryHost: '10.200.7.1:5000',
  cniBinDir: '/cache/debian/root/usr/lib/cni',
  runcPath: '/cache/debian/root/usr/sbin/runc',
  shimDir: '/run-dir/bin',
};

describe('real nodes network plan', () => {
  it('gives each node an address on the bridge and its own pod range inside the cluster range', () => {
    const net = planNetwork(7, ['local-node-1', 'local-node-2']);
    expect(net).toMatchObject({ bridge: 'cairnbr7', hostIp: '10.200.7.1', clusterCidr: '10.107.0.0/16' });
    expect(net.nodes.map((n) => [n.ip, n.podCidr, n.netns, n.hostVeth])).toEqual([
      ['10.200.7.2', '10.107.1.0/24', 'cairn7-local-node-1', 'cairn7n1'],
      ['10.200.7.3', '10.107.2.0/24', 'cairn7-local-node-2', 'cairn7n2'],
    ]);
    for (const n of net.nodes) expect(n.hostVeth.length).toBeLessThanOrEqual(15);
  });

  it('routes pod ranges between nodes and from the host, with nothing leaving the bridge', () => {
    const { host, nodes } = createCommands(planNetwork(7, ['local-node-1', 'local-node-2']));
    expect(host).toContain('route add 10.107.1.0/24 via 10.200.7.2 dev cairnbr7');
    expect(nodes[0]).toMatchObject({ netns: 'cairn7-local-node-1' });
    expect(nodes[0]!.lines).toContain('route add 10.107.2.0/24 via 10.200.7.3');
    expect(nodes[1]!.lines).toContain('route add default via 10.200.7.1');
    expect([...host, ...nodes.flatMap((n) => n.lines)].filter((l) => /nat|masquerade/.test(l))).toEqual([]);
  });

  it('prefers the same network for the same run directory', () => {
    expect(preferredIndex('/a/run')).toBe(preferredIndex('/a/run'));
    expect(preferredIndex('/a/run')).toBeLessThan(MAX_NETWORKS);
  });
});

describe('real node configuration', () => {
  it('runs the kubelet on cgroup v1 with the cgroupfs driver, its own cgroup root and root directory', () => {
    const c = parse(kubeletConfig(plan)) as Record<string, unknown>;
    expect(c).toMatchObject({
      failCgroupV1: false, cgroupDriver: 'cgroupfs', cgroupRoot: '/cairn7-local-node-1',
      containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock', address: '10.200.7.2',
      authentication: { anonymous: { enabled: false }, x509: { clientCAFile: '/run-dir/pki/ca.crt' } },
    });
    expect(kubeletArgs(plan)).toContain(`--root-dir=${KUBELET_ROOT_DIR}`);
    expect(KUBELET_ROOT_DIR).not.toBe('/var/lib/kubelet');
  });

  it('points containerd at runc, the CNI plugins and the test bed registry', () => {
    const toml = containerdConfig(plan);
    expect(toml).toContain("BinaryName = '/cache/debian/root/usr/sbin/runc'");
    expect(toml).toContain("bin_dirs = ['/cache/debian/root/usr/lib/cni']");
    expect(toml).toContain("config_path = '/run-dir/nodes/local-node-1/certs.d'");
    expect(registryHostsToml(plan.registryHost)).toContain("server = 'http://10.200.7.1:5000'");
  });

  it('gives pods the node range, unmasqueraded', () => {
    const cni = JSON.parse(cniConfig(plan)) as { plugins: { type: string; ipMasq?: boolean; ipam?: { ranges: { subnet: string }[][] } }[] };
    expect(cni.plugins[0]).toMatchObject({ type: 'bridge', ipMasq: false });
    expect(cni.plugins[0]!.ipam!.ranges[0]![0]!.subnet).toBe('10.107.1.0/24');
  });

  it('runs kube-proxy in iptables mode without touching machine-wide conntrack limits', () => {
    const c = parse(kubeProxyConfig(plan)) as Record<string, unknown>;
    expect(c).toMatchObject({ mode: 'iptables', clusterCIDR: '10.107.0.0/16', conntrack: { maxPerCore: 0, min: 0 } });
  });
});

describe('CSI manifests for real nodes', () => {
  const objects = csiManifests({
    stateDir: '/run-dir/csi/hostpath',
    protoPath: '/driver/csi.proto',
    realNodes: { kubeletRootDir: '/var/lib/k8s/kubelet', registrationProto: '/driver/registration.proto' },
  });
  const nodeSpec = () => {
    const ds = objects.find((o) => o.kind === 'DaemonSet') as { spec: { template: { spec: {
      containers: { args: string[]; volumeMounts: { name: string; mountPath: string; mountPropagation?: string }[] }[];
      volumes: { name: string; hostPath?: { path: string } }[];
    } } } };
    return ds.spec.template.spec;
  };

  it('mounts the kubelet root directory where the kubelet has it, and registers through its plugins_registry', () => {
    const spec = nodeSpec();
    const c = spec.containers[0]!;
    expect(c.volumeMounts).toContainEqual({ name: 'kubelet-dir', mountPath: '/var/lib/k8s/kubelet', mountPropagation: 'Bidirectional' });
    expect(spec.volumes).toContainEqual({ name: 'registration-dir', hostPath: { path: '/var/lib/k8s/kubelet/plugins_registry', type: 'DirectoryOrCreate' } });
    expect(spec.volumes).toContainEqual({ name: 'socket-dir', hostPath: { path: '/var/lib/k8s/kubelet/plugins/hostpath.csi.k8s.io', type: 'DirectoryOrCreate' } });
    expect(c.args).toContain('--kubelet-endpoint=/var/lib/k8s/kubelet/plugins/hostpath.csi.k8s.io/csi.sock');
    expect(c.args).toContain('--proto=/driver/csi.proto');
  });

  it('gives the driver the state directory through a hostPath (real containers do not see the host)', () => {
    expect(nodeSpec().volumes).toContainEqual({ name: 'state-dir', hostPath: { path: '/run-dir/csi/hostpath', type: 'DirectoryOrCreate' } });
  });
});
