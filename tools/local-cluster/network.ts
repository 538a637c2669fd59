/**
 * The real nodes' network, all of it on this machine and made by the test bed:
 *
 *   host ── bridge cairnbr<N> 10.200.<N>.1/24 ──┬── veth ── netns cairn<N>-local-node-1: eth0 10.200.<N>.2
 *                                               └── veth ── netns cairn<N>-local-node-2: eth0 10.200.<N>.3 ...
 *
 * Each node is a network namespace with one address on the bridge; its pods get addresses from the node's own
 * /24 of the cluster's pod range 10.<100+N>.0.0/16 (node i: 10.<100+N>.<i>.0/24, made by the CNI bridge plugin
 * inside the node). Routes, not NAT: every node routes the other nodes' pod ranges to them over the bridge, and
 * the host routes each node's pod range to that node, so pods, nodes and the host's servers (API server, MinIO,
 * registry, all listening on 10.200.<N>.1) reach each other with their own addresses. The host does no forwarding
 * (its ip_forward is left as it is); nothing is routed off the machine.
 *
 * N (0-63) is picked per cluster, free among the clusters running on the machine, under a machine-wide lock, and
 * recorded in <run-dir>/network.json so `down` removes exactly what `up` made (namespaces, bridge, veths and routes
 * go with the namespaces and the bridge).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { withFileLock } from './lock.js';

const exec = promisify(execFile);

/** How many clusters with real nodes can run on one machine at once. */
export const MAX_NETWORKS = 64;

export interface NodeNetwork {
  name: string;
  /** The node's address on the bridge (its InternalIP). */
  ip: string;
  /** The node's pod range, e.g. 10.105.1.0/24. */
  podCidr: string;
  /** Its network namespace (`ip netns` name; file /run/netns/<netns>). */
  netns: string;
  /** The host side of its veth. */
  hostVeth: string;
}

export interface ClusterNetwork {
  index: number;
  bridge: string;
  /** The host's address on the bridge: where the API server, MinIO and the registry listen for the nodes. */
  hostIp: string;
  /** `10.200.<N>` */
  nodeSubnet: string;
  /** The cluster's pod range, e.g. 10.105.0.0/16. */
  clusterCidr: string;
  nodes: NodeNetwork[];
}

const networkFile = (runDir: string) => join(runDir, 'network.json');

export function readNetwork(runDir: string): ClusterNetwork | undefined {
  const file = networkFile(runDir);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as ClusterNetwork;
}

/** The addresses and names of cluster number `index` with the given nodes (pure; see createNetwork). */
export function planNetwork(index: number, nodeNames: string[]): ClusterNetwork {
  const nodeSubnet = `10.200.${index}`;
  return {
    index,
    bridge: `cairnbr${index}`,
    hostIp: `${nodeSubnet}.1`,
    nodeSubnet,
    clusterCidr: `10.${100 + index}.0.0/16`,
    nodes: nodeNames.map((name, k) => ({
      name,
      ip: `${nodeSubnet}.${k + 2}`,
      podCidr: `10.${100 + index}.${k + 1}.0/24`,
      netns: `cairn${index}-${name}`,
      hostVeth: `cairn${index}n${k + 1}`,
    })),
  };
}

/** Interface names and addresses already on the host, to keep clear of other clusters (and anything else). */
export async function hostNetworkInUse(): Promise<{ links: Set<string>; addresses: Set<string>; netns: Set<string> }> {
  const links = JSON.parse((await exec('ip', ['-j', 'link', 'show'])).stdout) as { ifname: string }[];
  const addrs = JSON.parse((await exec('ip', ['-j', 'addr', 'show'])).stdout) as { addr_info?: { local?: string }[] }[];
  const netns = (await exec('ip', ['netns', 'list'])).stdout.split('\n').map((l) => l.split(' ')[0] ?? '').filter(Boolean);
  return {
    links: new Set(links.map((l) => l.ifname)),
    addresses: new Set(addrs.flatMap((a) => (a.addr_info ?? []).map((i) => i.local ?? ''))),
    netns: new Set(netns),
  };
}

export function preferredIndex(runDir: string): number {
  return createHash('sha256').update(runDir).digest()[0]! % MAX_NETWORKS;
}

/**
 * Makes the bridge, one namespace per node with its veth, address and routes, and records it all in
 * <run-dir>/network.json (written before anything is made, so `down` can undo a half-made network).
 */
export async function createNetwork(runDir: string, nodeNames: string[]): Promise<ClusterNetwork> {
  // Machine-wide, not per cache root: clusters of a scratch cache root (CAIRN_CACHE_DIR) share the machine's network.
  const net = await withFileLock({ path: join(tmpdir(), 'cairn-network.lock'), timeoutMs: 60_000 }, async () => {
    const inUse = await hostNetworkInUse();
    const first = preferredIndex(runDir);
    for (let k = 0; k < MAX_NETWORKS; k++) {
      const plan = planNetwork((first + k) % MAX_NETWORKS, nodeNames);
      const taken = inUse.links.has(plan.bridge) || inUse.addresses.has(plan.hostIp) ||
        plan.nodes.some((n) => inUse.netns.has(n.netns) || inUse.links.has(n.hostVeth));
      if (taken) continue;
      writeFileSync(networkFile(runDir), `${JSON.stringify(plan, null, 2)}\n`);
      const commands = createCommands(plan);
      await ipBatch(commands.host);
      await Promise.all(commands.nodes.map((n) => ipBatch(n.lines, n.netns)));
      return plan;
    }
    throw new Error(`no free cluster network: ${MAX_NETWORKS} clusters with real nodes already run on this machine`);
  });
  // Per-namespace settings: forwarding between the node's pods and the bridge, and bridged pod traffic through
  // iptables, so kube-proxy's rules see traffic between two pods of one node.
  await Promise.all(net.nodes.map((n) => exec('ip', ['netns', 'exec', n.netns, 'sysctl', '-q', '-w',
    'net.ipv4.ip_forward=1', 'net.bridge.bridge-nf-call-iptables=1', 'net.ipv4.conf.all.rp_filter=0'])));
  return net;
}

export interface NetworkCommands {
  /** `ip -batch` lines run in the host's namespace. */
  host: string[];
  /** Per node namespace, `ip -n <netns> -batch` lines run inside it. */
  nodes: { netns: string; lines: string[] }[];
}

/** The `ip` commands that make the network (pure, for tests). */
export function createCommands(net: ClusterNetwork): NetworkCommands {
  const host = [
    `link add ${net.bridge} type bridge`,
    `addr add ${net.hostIp}/24 dev ${net.bridge}`,
    `link set ${net.bridge} up`,
  ];
  const nodes: NetworkCommands['nodes'] = [];
  for (const n of net.nodes) {
    host.push(
      `netns add ${n.netns}`,
      `link add ${n.hostVeth} type veth peer name eth0 netns ${n.netns}`,
      `link set ${n.hostVeth} master ${net.bridge} up`,
      `route add ${n.podCidr} via ${n.ip} dev ${net.bridge}`,
    );
    nodes.push({
      netns: n.netns,
      lines: [
        'link set lo up',
        `addr add ${n.ip}/24 dev eth0`,
        'link set eth0 up',
        `route add default via ${net.hostIp}`,
        ...net.nodes.filter((o) => o !== n).map((o) => `route add ${o.podCidr} via ${o.ip}`),
      ],
    });
  }
  return { host, nodes };
}

/** Removes the namespaces and the bridge (veths and routes go with them). Idempotent. */
export async function deleteNetwork(runDir: string): Promise<void> {
  const net = readNetwork(runDir);
  if (!net) return;
  // Namespaces first: their veths (and so the host ends, a moment later) go with them; then the bridge and any
  // host end still there. A link that vanishes between listing and deleting is already what we want.
  const before = await hostNetworkInUse();
  const namespaces = net.nodes.filter((n) => before.netns.has(n.netns)).map((n) => `netns delete ${n.netns}`);
  if (namespaces.length > 0) await ipBatch(namespaces);
  const after = await hostNetworkInUse();
  const links = [...net.nodes.map((n) => n.hostVeth), net.bridge].filter((l) => after.links.has(l));
  for (const link of links) {
    await ipBatch([`link delete ${link}`]).catch((err: unknown) => {
      if (!/Cannot find device|No such device/.test(String(err))) throw err;
    });
  }
  rmSync(networkFile(runDir), { force: true });
}

async function ipBatch(lines: string[], netns?: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = execFile('ip', [...(netns ? ['-n', netns] : []), '-batch', '-'], (err, _stdout, stderr) => {
      if (err) reject(new Error(`ip -batch failed: ${stderr.trim() || err.message}`));
      else resolve();
    });
    child.stdin?.end(`${lines.join('\n')}\n`);
  });
}
