/**
 * What a real node runs with: containerd's config.toml and registry hosts file, the CNI network, the kubelet's and
 * kube-proxy's configuration files. Pure functions of the node's plan, so every setting is checked by unit tests
 * and explained here once.
 *
 * A node lives in its own network namespace and its own mount namespace, in which its private directories of the
 * run directory are mounted over /var/lib, /run and /var/log (see supervisor.ts): the kubelet, containerd, the CNI
 * plugins and iptables keep their state where they always do, and nothing of it lands outside the run directory
 * or is shared between nodes. The kubelet's root directory is not the default /var/lib/kubelet but
 * KUBELET_ROOT_DIR, as on distributions that move it: what reads pod volumes from the host (the node agent's
 * hostPath) must follow it.
 */
import { stringify as toYaml } from 'yaml';

/** The kubelet's --root-dir on every real node (inside the node's mount namespace). */
export const KUBELET_ROOT_DIR = '/var/lib/k8s/kubelet';
/** Where the node's pods directory is: the host path a node agent reads pod volumes from. */
export const KUBELET_PODS_DIR = `${KUBELET_ROOT_DIR}/pods`;
export const CONTAINERD_SOCKET = '/run/containerd/containerd.sock';
/** The sandbox (pause) image every pod starts with; pulled from the test bed's registry like every image. */
export const SANDBOX_IMAGE = 'registry.k8s.io/pause:3.10';
/** The pause image's repository and tag in the test bed's registry (what the sandbox image maps to). */
export const SANDBOX_REPOSITORY = { repository: 'pause', tag: '3.10' } as const;

/** Directories of the node's own (in the run directory) mounted over system directories inside the node. */
export const NODE_MOUNTS = [
  { from: 'var-lib', to: '/var/lib' },
  { from: 'run', to: '/run' },
  { from: 'var-log', to: '/var/log' },
] as const;

export interface NodePlan {
  name: string;
  /** The node's directory in the run directory (<run-dir>/nodes/<name>). */
  rootDir: string;
  ip: string;
  podCidr: string;
  clusterCidr: string;
  /** cgroup (v1, cgroupfs driver) under which this node's pods live, e.g. /cairn3-local-node-1. */
  cgroupRoot: string;
  kubeconfigPath: string;
  caFile: string;
  kubeletCert: string;
  kubeletKey: string;
  /** The registry every image is pulled from: `host:port`, plain HTTP. */
  registryHost: string;
  /** Folder holding the CNI plugins (bridge, host-local, loopback, portmap). */
  cniBinDir: string;
  runcPath: string;
  shimDir: string;
}

export const nodePaths = (plan: Pick<NodePlan, 'rootDir'>) => ({
  containerdConfig: `${plan.rootDir}/containerd.toml`,
  registryHostsDir: `${plan.rootDir}/certs.d`,
  cniConfDir: `${plan.rootDir}/cni`,
  kubeletConfig: `${plan.rootDir}/kubelet.yaml`,
  kubeProxyConfig: `${plan.rootDir}/kube-proxy.yaml`,
  resolvConf: `${plan.rootDir}/resolv.conf`,
});

export function containerdConfig(plan: NodePlan): string {
  const p = nodePaths(plan);
  return [
    // The configuration format of containerd 2.4 (version 3 files are migrated at every start, with a warning).
    'version = 4',
    "root = '/var/lib/containerd'",
    "state = '/run/containerd'",
    // Not the machine's /etc/containerd/conf.d: a node is configured by this file alone.
    'imports = []',
    // Plugins the test bed has no use for, and the one that would install into /opt on the host.
    "disabled_plugins = ['io.containerd.internal.v1.opt', 'io.containerd.nri.v1.nri', 'io.containerd.snapshotter.v1.zfs', 'io.containerd.snapshotter.v1.devmapper', 'io.containerd.snapshotter.v1.btrfs', 'io.containerd.tracing.processor.v1.otlp']",
    '',
    '[grpc]',
    `  address = '${CONTAINERD_SOCKET}'`,
    '',
    "[plugins.'io.containerd.cri.v1.images']",
    "  snapshotter = 'overlayfs'",
    "[plugins.'io.containerd.cri.v1.images'.pinned_images]",
    `  sandbox = '${SANDBOX_IMAGE}'`,
    "[plugins.'io.containerd.cri.v1.images'.registry]",
    // Every registry name (docker.io, registry.k8s.io, ghcr.io...) resolves to the test bed's registry: see
    // registryHostsToml. Nothing is pulled from outside.
    `  config_path = '${p.registryHostsDir}'`,
    '',
    "[plugins.'io.containerd.cri.v1.runtime']",
    // No AppArmor or SELinux on the test machine; hugetlb is not mounted there (cgroup v1).
    '  disable_apparmor = true',
    '  tolerate_missing_hugetlb_controller = true',
    '  disable_hugetlb_controller = true',
    // Without CAP_SYS_RESOURCE (this machine's sandbox withholds it) no process may lower its OOM score; the
    // sandbox (-998) and Guaranteed pods (-997) would fail to start. Keep them no lower than containerd's own.
    '  restrict_oom_score_adj = true',
    "[plugins.'io.containerd.cri.v1.runtime'.containerd]",
    "  default_runtime_name = 'runc'",
    "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]",
    "  runtime_type = 'io.containerd.runc.v2'",
    "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]",
    `  BinaryName = '${plan.runcPath}'`,
    '  SystemdCgroup = false',
    "[plugins.'io.containerd.cri.v1.runtime'.cni]",
    `  bin_dirs = ['${plan.cniBinDir}']`,
    `  conf_dir = '${p.cniConfDir}'`,
    '',
    "[plugins.'io.containerd.grpc.v1.cri']",
    // Exec, attach and port-forward streams: served on the node's loopback, proxied by the kubelet.
    "  stream_server_address = '127.0.0.1'",
    "  stream_server_port = '0'",
    '',
  ].join('\n');
}

/**
 * containerd's hosts file for the `_default` namespace: any registry host an image names is served by the test
 * bed's registry over plain HTTP (the repository path is kept: registry.k8s.io/pause:3.10 is `pause:3.10` there,
 * docker.io/library/busybox is `library/busybox`).
 */
export function registryHostsToml(registryHost: string): string {
  return [
    `server = 'http://${registryHost}'`,
    '',
    `[host.'http://${registryHost}']`,
    "  capabilities = ['pull', 'resolve']",
    '',
  ].join('\n');
}

/** The pod network inside the node: a bridge with the node's pod range, host-local addresses, hostPort support. */
export function cniConfig(plan: NodePlan): string {
  return `${JSON.stringify({
    cniVersion: '1.0.0',
    name: 'cairn-pods',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        // Pods keep their own addresses everywhere: other nodes and the host route the node's pod range here.
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: plan.podCidr }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: '/var/lib/cni/networks',
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  }, null, 2)}\n`;
}

export function kubeletConfig(plan: NodePlan): string {
  const p = nodePaths(plan);
  return toYaml({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // The machine runs cgroup v1, which Kubernetes 1.35+ refuses unless told otherwise; the cgroupfs driver,
    // since no systemd manages cgroups here.
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    // Each node's pods get their own cgroup tree, so nodes on one machine never share one.
    cgroupRoot: plan.cgroupRoot,
    cgroupsPerQOS: true,
    enforceNodeAllocatable: ['pods'],
    containerRuntimeEndpoint: `unix://${CONTAINERD_SOCKET}`,
    address: plan.ip,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    tlsCertFile: plan.kubeletCert,
    tlsPrivateKeyFile: plan.kubeletKey,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: plan.caFile } },
    // The API server is the only client that can present a certificate of the cluster's CA.
    authorization: { mode: 'AlwaysAllow' },
    // No cluster DNS runs in the test bed; pods get a resolver file with no server (names do not resolve).
    resolvConf: p.resolvConf,
    volumePluginDir: `${KUBELET_ROOT_DIR}-plugins/volume/exec`,
    failSwapOn: false,
    // Disk and memory are shared with the rest of the machine: never evict or garbage-collect images because
    // another process filled the disk.
    evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '0%', 'nodefs.inodesFree': '0%', 'imagefs.available': '0%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    nodeStatusUpdateFrequency: '10s',
    // Pod and volume changes are seen through the API watch; the periodic resync only catches what was missed.
    syncFrequency: '30s',
    shutdownGracePeriod: '0s',
    maxPods: 110,
    podCIDR: plan.podCidr,
  });
}

export function kubeProxyConfig(plan: NodePlan): string {
  return toYaml({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: plan.kubeconfigPath },
    hostnameOverride: plan.name,
    mode: 'iptables',
    clusterCIDR: plan.clusterCidr,
    bindAddress: plan.ip,
    healthzBindAddress: '127.0.0.1:10256',
    metricsBindAddress: '127.0.0.1:10249',
    // conntrack limits are machine-wide, not per namespace: leave them as the machine has them.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    iptables: { syncPeriod: '30s', minSyncPeriod: '0s' },
  });
}

/** Argument list of the kubelet (the rest is in its configuration file). */
export function kubeletArgs(plan: NodePlan): string[] {
  return [
    `--config=${nodePaths(plan).kubeletConfig}`,
    `--kubeconfig=${plan.kubeconfigPath}`,
    `--root-dir=${KUBELET_ROOT_DIR}`,
    `--hostname-override=${plan.name}`,
    `--node-ip=${plan.ip}`,
    '--v=1',
  ];
}
