/**
 * Real nodes (`cluster:up -- --runtime containerd`): per node a network namespace on the cluster's bridge
 * (network.ts), and in it, in fresh mount and PID namespaces under tini, the node supervisor (supervisor.ts)
 * running containerd, the kubelet and kube-proxy built from the pinned releases, runc and the CNI plugins from
 * Debian's packages. Each node is one recorded process (`node-<name>`): stopping it stops everything of the node.
 * `cleanupRealNodes` then removes what lives outside the namespaces: the nodes' cgroups and the network.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { debianTools, type DebianTools } from '../debian.js';
import type { Pki } from '../pki.js';
import { repoRoot } from '../paths.js';
import { startProcess, type ProcessRecord } from '../processes.js';
import type { NodeInfo } from '../state.js';
import type { NodeBinaryPaths, BinaryPaths } from '../toolchain.js';
import type { ClusterNetwork, NodeNetwork } from '../network.js';
import {
  cniConfig, CONTAINERD_SOCKET, containerdConfig, kubeletArgs, kubeletConfig, kubeProxyConfig, NODE_MOUNTS, nodePaths,
  registryHostsToml, type NodePlan,
} from './node-config.js';
import type { NodeSupervisorSpec } from './supervisor.js';

/** Debian packages a real node needs from outside the Go builds. */
export const NODE_PACKAGES = ['runc', 'containernetworking-plugins', 'iptables', 'tini'] as const;

const SUPERVISOR = 'tools/local-cluster/node/supervisor.ts';

/** The kernel settings the kubelet insists on; masked inside each node so the machine's own stay untouched. */
const KUBELET_SYSCTLS: Record<string, string> = {
  '/proc/sys/vm/overcommit_memory': '1',
  '/proc/sys/vm/panic_on_oom': '0',
  '/proc/sys/kernel/panic': '10',
  '/proc/sys/kernel/panic_on_oops': '1',
  '/proc/sys/kernel/keys/root_maxkeys': '1000000',
  '/proc/sys/kernel/keys/root_maxbytes': '25000000',
};

export interface RealNodesContext {
  runDir: string;
  pki: Pki;
  kubeconfigPath: string;
  binaries: BinaryPaths;
  nodeBinaries: NodeBinaryPaths;
  network: ClusterNetwork;
  registryHost: string;
  onStarted: (p: ProcessRecord) => void;
  log: (line: string) => void;
}

export interface RealNodesStart {
  nodes: NodeInfo[];
  processes: ProcessRecord[];
}

/** The cgroup (v1) under which a node's pods live: one per cluster network and node. */
export const nodeCgroupRoot = (network: Pick<ClusterNetwork, 'index'>, node: string) => `/cairn${network.index}-${node}`;

export async function startRealNodes(ctx: RealNodesContext): Promise<RealNodesStart> {
  ensureInotifyInstances(ctx.log);
  const debian = await debianTools(NODE_PACKAGES, ctx.log);
  const binDir = linkNodeTools(ctx, debian);
  const out: RealNodesStart = { nodes: [], processes: [] };
  for (const n of ctx.network.nodes) {
    const plan = nodePlan(ctx, n, debian);
    writeNodeFiles(plan);
    createCgroup(plan.cgroupRoot);
    const spec = supervisorSpec(ctx, plan, binDir, debian);
    const specFile = join(plan.rootDir, 'supervisor.json');
    writeFileSync(specFile, JSON.stringify(spec, null, 2));
    const proc = startProcess({
      name: `node-${n.name}`,
      command: 'nsenter',
      args: [
        `--net=/run/netns/${n.netns}`, '--',
        'unshare', '--mount', '--pid', '--fork', '--kill-child', '--mount-proc', '--propagation', 'slave', '--',
        debian.bin('tini'), '-g', '--',
        process.execPath, '--import', 'tsx', SUPERVISOR, specFile,
      ],
      cwd: repoRoot(),
      env: debian.env(process.env),
      logFile: join(ctx.runDir, 'logs', `node-${n.name}.log`),
    });
    ctx.onStarted(proc);
    out.processes.push(proc);
    out.nodes.push({ name: n.name, ip: n.ip, rootDir: plan.rootDir, port: 10250 });
  }
  return out;
}

function nodePlan(ctx: RealNodesContext, n: NodeNetwork, debian: DebianTools): NodePlan {
  return {
    name: n.name,
    rootDir: join(ctx.runDir, 'nodes', n.name),
    ip: n.ip,
    podCidr: n.podCidr,
    clusterCidr: ctx.network.clusterCidr,
    cgroupRoot: nodeCgroupRoot(ctx.network, n.name),
    kubeconfigPath: ctx.kubeconfigPath,
    caFile: ctx.pki.caCert,
    kubeletCert: ctx.pki.kubeletCert,
    kubeletKey: ctx.pki.kubeletKey,
    registryHost: ctx.registryHost,
    cniBinDir: join(debian.prefix, 'usr/lib/cni'),
    runcPath: debian.bin('runc'),
    shimDir: join(ctx.runDir, 'bin'),
  };
}

function writeNodeFiles(plan: NodePlan): void {
  const p = nodePaths(plan);
  for (const m of NODE_MOUNTS) mkdirSync(join(plan.rootDir, m.from), { recursive: true });
  mkdirSync(join(p.registryHostsDir, '_default'), { recursive: true });
  mkdirSync(p.cniConfDir, { recursive: true });
  writeFileSync(p.containerdConfig, containerdConfig(plan));
  writeFileSync(join(p.registryHostsDir, '_default', 'hosts.toml'), registryHostsToml(plan.registryHost));
  writeFileSync(join(p.cniConfDir, '10-cairn-pods.conflist'), cniConfig(plan));
  writeFileSync(p.kubeletConfig, kubeletConfig(plan));
  writeFileSync(p.kubeProxyConfig, kubeProxyConfig(plan));
  writeFileSync(p.resolvConf, '# no cluster DNS in the cairn test bed\n');
}

/**
 * <run-dir>/bin: the names the node's programs look for on PATH. containerd finds its shim by name; kube-proxy and
 * the portmap plugin run `iptables`, which Debian's package only provides through the alternatives system (not
 * run when unpacking): the nft variant, each node's rules live in its own network namespace.
 */
function linkNodeTools(ctx: RealNodesContext, debian: DebianTools): string {
  const dir = join(ctx.runDir, 'bin');
  mkdirSync(dir, { recursive: true });
  const links: Record<string, string> = { 'containerd-shim-runc-v2': ctx.nodeBinaries.containerdShim };
  const nft = debian.bin('xtables-nft-multi');
  for (const name of ['iptables', 'iptables-save', 'iptables-restore', 'ip6tables', 'ip6tables-save', 'ip6tables-restore']) links[name] = nft;
  for (const [name, target] of Object.entries(links)) {
    if (!existsSync(join(dir, name))) symlinkSync(target, join(dir, name));
  }
  return dir;
}

function supervisorSpec(ctx: RealNodesContext, plan: NodePlan, binDir: string, debian: DebianTools): NodeSupervisorSpec {
  const p = nodePaths(plan);
  const logs = join(ctx.runDir, 'logs');
  const env = debian.env({ PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' });
  return {
    node: plan.name,
    mounts: NODE_MOUNTS.map((m) => ({ from: join(plan.rootDir, m.from), to: m.to })),
    sysctlMasks: Object.entries(KUBELET_SYSCTLS)
      .filter(([path, value]) => readSysctl(path) !== value)
      .map(([path, value]) => ({ path, value })),
    maskDir: join(plan.rootDir, 'sysctl'),
    env: {
      // <run-dir>/bin first: the shared Debian prefix may hold other packages' programs of the same names (Debian's
      // containerd 1.6 brings a containerd-shim-runc-v2 that speaks an older protocol).
      PATH: `${binDir}${delimiter}${env.PATH ?? ''}`,
      LD_LIBRARY_PATH: env.LD_LIBRARY_PATH ?? '',
      // iptables loads its match and target extensions from here (the unpacked package, not the system's).
      XTABLES_LIBDIR: join(debian.prefix, 'usr/lib/x86_64-linux-gnu/xtables'),
    },
    containerd: {
      name: `containerd-${plan.name}`,
      command: ctx.nodeBinaries.containerd,
      args: ['--config', p.containerdConfig, '--log-level', 'warn'],
      logFile: join(logs, `containerd-${plan.name}.log`),
    },
    containerdSocket: CONTAINERD_SOCKET,
    kubelet: {
      name: `kubelet-${plan.name}`,
      command: ctx.binaries.kubelet,
      args: kubeletArgs(plan),
      logFile: join(logs, `kubelet-${plan.name}.log`),
    },
    kubeProxy: {
      name: `kube-proxy-${plan.name}`,
      command: ctx.binaries.kubeProxy,
      args: [`--config=${p.kubeProxyConfig}`, '--v=1'],
      logFile: join(logs, `kube-proxy-${plan.name}.log`),
    },
  };
}

function readSysctl(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

const CGROUP_V1 = '/sys/fs/cgroup';

/** The cgroup v1 hierarchies mounted on this machine (cpu, memory, pids...; not the v2 `unified` one). */
function cgroupHierarchies(): string[] {
  if (!existsSync(CGROUP_V1)) return [];
  return readdirSync(CGROUP_V1)
    .map((d) => join(CGROUP_V1, d))
    .filter((d) => !d.endsWith('/unified') && existsSync(join(d, 'cgroup.procs')) && statSync(d).isDirectory());
}

/**
 * The CPU weight of a node's cgroup (cgroup v1 `cpu.shares`) against the machine's other processes. Every process
 * outside the nodes (the API server, etcd, the test runner, a stand-in node's pods) weighs 1024 on its own, while all
 * of a node's pods together sit in one cgroup: left at the default 1024, a node's pods share one process's worth of
 * CPU whenever the machine is busy, and a pod that starts in a second alone takes half a minute. A node weighs what a
 * few busy processes do, about what its pods would be on the stand-in.
 */
export const NODE_CPU_SHARES = 4 * 1024;

/** The kubelet wants its cgroup root to exist in every hierarchy; cpuset needs its cpus and mems filled in. */
function createCgroup(root: string): void {
  for (const h of cgroupHierarchies()) {
    const dir = join(h, root);
    mkdirSync(dir, { recursive: true });
    if (h.endsWith('/cpuset')) {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) copyFileSync(join(h, f), join(dir, f));
    }
    if (existsSync(join(dir, 'cpu.shares'))) writeFileSync(join(dir, 'cpu.shares'), String(NODE_CPU_SHARES));
  }
}

/**
 * Removes a node's cgroup tree, deepest first. Its processes are gone by then (their PID namespace ended); a
 * cgroup that still holds one (it should not) is left and reported.
 */
export function removeCgroup(root: string): string[] {
  const left: string[] = [];
  for (const h of cgroupHierarchies()) {
    const top = join(h, root);
    if (!existsSync(top)) continue;
    const dirs: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
      dirs.push(d);
    };
    walk(top);
    for (const d of dirs) {
      try {
        rmdirSync(d);
      } catch {
        left.push(d);
      }
    }
  }
  return left;
}

/** Pids still in a node's cgroups (a test's check that nothing of a node survives it). */
export function cgroupProcesses(root: string): number[] {
  const pids = new Set<number>();
  for (const h of cgroupHierarchies()) {
    const top = join(h, root);
    if (!existsSync(top)) continue;
    const walk = (d: string) => {
      for (const l of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n')) if (l) pids.add(Number(l));
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    };
    walk(top);
  }
  return [...pids];
}

/**
 * The machine-wide limit on inotify instances per user: a kubelet opens about 20 (cAdvisor, its config and
 * certificate watches), an API server about 12, containerd a few more, and all of them run as root. At Linux's
 * default of 128 a second cluster of real nodes (parallel test tiers) or an editor's file watchers leave a kubelet
 * none: it exits at start with `inotify_init: too many open files`. kind tells its users to raise the same limit.
 */
export const INOTIFY_INSTANCES_WANTED = 1024;
const INOTIFY_INSTANCES = '/proc/sys/fs/inotify/max_user_instances';

/** What to do about the inotify limit: nothing, or raise it to the wanted value (never lowers a higher one). */
export function inotifyInstancesToSet(current: number, wanted = INOTIFY_INSTANCES_WANTED): number | undefined {
  return Number.isFinite(current) && current >= wanted ? undefined : wanted;
}

/** Raises fs.inotify.max_user_instances when it is below what real nodes need; a clear error if it cannot. */
function ensureInotifyInstances(log: (line: string) => void): void {
  if (!existsSync(INOTIFY_INSTANCES)) return;
  const current = Number(readFileSync(INOTIFY_INSTANCES, 'utf8').trim());
  const wanted = inotifyInstancesToSet(current);
  if (wanted === undefined) return;
  try {
    writeFileSync(INOTIFY_INSTANCES, String(wanted));
  } catch (err) {
    throw new Error(
      `fs.inotify.max_user_instances is ${current}; real nodes need about ${wanted} (each kubelet opens ~20) and it could not be raised ` +
        `(${(err as Error).message}): run 'sysctl -w fs.inotify.max_user_instances=${wanted}' as root`,
      { cause: err },
    );
  }
  log(`raised fs.inotify.max_user_instances from ${current} to ${wanted} (kubelets exit at start when none are left)`);
}

/** Checks the machine can run real nodes at all: root, and the tools the namespaces are made with. */
export function assertCanRunRealNodes(): void {
  if (process.getuid?.() !== 0) throw new Error('real nodes (--runtime containerd, the default) need root: namespaces, mounts, cgroups; --runtime local runs the kubelet stand-in without');
  const path = (process.env.PATH ?? '').split(delimiter);
  for (const tool of ['ip', 'nsenter', 'unshare', 'mount']) {
    if (!path.some((d) => existsSync(join(d, tool)))) throw new Error(`real nodes need '${tool}' (util-linux / iproute2) on PATH`);
  }
}
