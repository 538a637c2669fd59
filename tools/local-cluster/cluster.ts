/**
 * Cluster lifecycle: `up` starts etcd and MinIO, then the API server, then the controller manager, scheduler,
 * kubelet stand-ins and provisioner, waits until every node is Ready and writes <run-dir>/state.json; `down`
 * stops every recorded process group (and pod processes the kubelets left) and removes the run directory;
 * `health` probes what the state file lists. Every started process is recorded in <run-dir>/processes.json
 * the moment it starts, so a failed `up` can always be cleaned up by `down`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  adminTls, KUBERNETES_SERVICE_IP, SERVICE_CIDR, startApiServer, startControllerManager, startEtcd, startScheduler,
  type ControlPlaneContext,
} from './control-plane.js';
import { writeAdminKubeconfig } from './kubeconfig.js';
import { withFileLock } from './lock.js';
import { DEFAULT_BUCKET, startMinio } from './minio.js';
import {
  awaitNodesReady, MAX_NODE_OCTET, MAX_NODES, nodeName, nodeSubnet, readyNodeNames, startNodes, startProvisioner, stopPodProcesses,
  type NodesStart,
} from './nodes.js';
import { ensurePki } from './pki.js';
import { isHealthy } from './probe.js';
import { startRegistry } from './registry.js';
import { isRunning, signalGroup, stopProcesses, type ProcessRecord } from './processes.js';
import { readState, writeState, type ClusterState } from './state.js';
import { binaryPaths, nodeBinaryPaths } from './toolchain.js';
import { pushTestImages } from './images/test-images.js';
import { createNetwork, deleteNetwork, readNetwork, type ClusterNetwork } from './network.js';
import { assertCanRunRealNodes, nodeCgroupRoot, removeCgroup, startRealNodes } from './node/real-nodes.js';

/** What runs the nodes: the TypeScript kubelet stand-in, or real kubelets on containerd (node/real-nodes.ts). */
export type NodeRuntime = 'local' | 'containerd';

export interface UpOptions {
  runDir: string;
  name: string;
  nodes: number;
  /** Default 'local'. */
  runtime?: NodeRuntime;
  bucket?: string;
  /** Deadline for the whole start, from the first process to all nodes Ready. */
  timeoutMs?: number;
  log: (line: string) => void;
}

export interface UpResult {
  state: ClusterState;
  /** False when a healthy cluster was already running in the run directory and was reused. */
  started: boolean;
  seconds: number;
}

/** Marks a directory as a run directory: only such a directory (or an empty one) is ever deleted. */
const MARKER = '.cairn-run-dir';

const processesFile = (runDir: string) => join(runDir, 'processes.json');

function readProcesses(runDir: string): ProcessRecord[] {
  try {
    return JSON.parse(readFileSync(processesFile(runDir), 'utf8')) as ProcessRecord[];
  } catch {
    return [];
  }
}

const runLock = (runDir: string) => ({ path: `${resolve(runDir)}.lock`, timeoutMs: 10 * 60_000 });

/**
 * Why stand-in nodes cannot run pods from `runDir`, or undefined. A stand-in container shares the host's root and
 * mounts its volumes one after another; cairn's pods mount an emptyDir at /tmp, which hides every later volume's
 * source under /tmp (the service account's token among them), so the pods would never start.
 */
export function standInRunDirProblem(runDir: string, runtime: NodeRuntime, nodes: number): string | undefined {
  if (runtime !== 'local' || nodes === 0) return undefined;
  const dir = resolve(runDir);
  if (dir !== '/tmp' && !dir.startsWith('/tmp/')) return undefined;
  return `the run directory ${dir} is under /tmp, which the stand-in's pods mount over: keep the cache (HOME or CAIRN_CACHE) outside /tmp, or use --runtime containerd`;
}

export async function up(opts: UpOptions): Promise<UpResult> {
  if (opts.nodes < 0 || opts.nodes > MAX_NODES) throw new Error(`--nodes must be between 0 and ${MAX_NODES}`);
  const problem = standInRunDirProblem(opts.runDir, opts.runtime ?? 'local', opts.nodes);
  if (problem) throw new Error(problem);
  const runDir = resolve(opts.runDir);
  return withFileLock(runLock(runDir), async () => {
    const existing = readState(runDir);
    if (existing) {
      const health = await clusterHealth(existing);
      const sameShape = existing.nodes.length === opts.nodes && (existing.runtime ?? 'local') === (opts.runtime ?? 'local');
      if (health.healthy && sameShape) return { state: existing, started: false, seconds: 0 };
      opts.log(`cluster in ${runDir} is not healthy or has a different node count or runtime: replacing it`);
    }
    // Leftovers of an earlier cluster here (a failed start, or one being replaced) go first.
    if (existing || readProcesses(runDir).length > 0) await stopAndRemove(runDir, { keep: false, graceMs: 5_000 });
    const started = Date.now();
    try {
      const state = await startAll({ ...opts, runDir });
      return { state, started: true, seconds: (Date.now() - started) / 1000 };
    } catch (err) {
      // Stop what did start; keep the run directory so its logs explain the failure.
      await stopAndRemove(runDir, { keep: true, graceMs: 3_000 });
      throw err;
    }
  });
}

async function startAll(opts: UpOptions & { runDir: string }): Promise<ClusterState> {
  const { runDir, log } = opts;
  const runtime = opts.runtime ?? 'local';
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  const left = () => Math.max(1_000, deadline - Date.now());
  mkdirSync(join(runDir, 'logs'), { recursive: true });
  writeFileSync(join(runDir, MARKER), 'local cluster run directory, deleted by `cluster:down`\n');
  const binaries = binaryPaths();
  const t0 = Date.now();
  const lap = (what: string) => log(`${what} (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
  const names = Array.from({ length: opts.nodes }, (_, i) => nodeName(i + 1));
  let network: ClusterNetwork | undefined;
  if (runtime === 'containerd') {
    assertCanRunRealNodes();
    network = await createNetwork(runDir, names);
    lap(`network ${network.bridge} ${network.hostIp}/24, pods ${network.clusterCidr}`);
  }
  // The host's servers listen where the nodes can reach them: loopback for the stand-in, the bridge for real nodes.
  const address = network?.hostIp ?? '127.0.0.1';
  const pki = ensurePki({
    dir: join(runDir, 'pki'),
    kubernetesServiceIp: KUBERNETES_SERVICE_IP,
    nodeSubnet: network?.nodeSubnet ?? nodeSubnet(runDir),
    maxNodeOctet: MAX_NODE_OCTET,
    nodeNames: Array.from({ length: MAX_NODES }, (_, i) => nodeName(i + 1)),
    apiServerIps: network ? [network.hostIp] : [],
  });
  const processes: ProcessRecord[] = [];
  const onStarted = (p: ProcessRecord) => {
    processes.push(p);
    writeFileSync(processesFile(runDir), JSON.stringify(processes, null, 2));
  };
  const kubeconfigPath = join(runDir, 'admin.kubeconfig');
  const ctx: ControlPlaneContext = {
    runDir, binaries, pki, kubeconfigPath, onStarted,
    apiServerAddress: address,
    // Real kubelets register with the not-ready taint; the node lifecycle controller lifts it once they are Ready.
    extraControllers: network ? ['node-lifecycle-controller'] : [],
  };

  const [etcd, minio, registry] = await Promise.all([
    startEtcd(ctx, left()),
    startMinio({ runDir, binary: binaries.minio, bucket: opts.bucket ?? DEFAULT_BUCKET, address, onStarted, timeoutMs: left() }),
    startRegistry({ runDir, binary: binaries.registry, address, onStarted, timeoutMs: left() }),
  ]);
  lap(`etcd ready at ${etcd.url}; MinIO ready at ${minio.s3.endpoint}, bucket ${minio.s3.bucket}; registry at ${registry.registry.url}`);
  const [apiserver] = await Promise.all([
    startApiServer(ctx, etcd.url, left()),
    network ? pushTestImages(registry.registry.url, log) : Promise.resolve(),
  ]);
  writeAdminKubeconfig({ path: kubeconfigPath, apiServerUrl: apiserver.url, pki });
  lap(`kube-apiserver ready at ${apiserver.url}`);

  const nodesCtx = { runDir, pki, kubeconfigPath, apiServerUrl: apiserver.url, onStarted, log };
  const startAllNodes = async (): Promise<NodesStart> => {
    if (!network) return startNodes(nodesCtx, opts.nodes);
    const real = await startRealNodes({
      runDir, pki, kubeconfigPath, binaries, nodeBinaries: nodeBinaryPaths(), network, registryHost: registry.registry.host, onStarted, log,
    });
    return { nodes: real.nodes, kubelets: real.processes, provisioner: startProvisioner(nodesCtx) };
  };
  const [kcm, scheduler, nodes] = await Promise.all([
    startControllerManager(ctx, left()),
    startScheduler(ctx, left()),
    startAllNodes(),
  ]);
  lap('kube-controller-manager and kube-scheduler healthy');
  await awaitNodesReady(nodesCtx, nodes, left());
  if (nodes.kubelets.length > 0) lap(`nodes Ready: ${nodes.nodes.map((n) => n.name).join(', ')}`);

  const state: ClusterState = {
    version: 1,
    name: opts.name,
    runDir,
    runtime,
    startedAt: new Date().toISOString(),
    kubeconfigPath,
    apiServerUrl: apiserver.url,
    etcdUrl: etcd.url,
    serviceCidr: SERVICE_CIDR,
    binaries,
    pki,
    s3: minio.s3,
    registry: registry.registry,
    nodes: nodes.kubelets.length > 0 ? nodes.nodes : [],
    processes,
    health: [etcd.health, minio.health, registry.health, apiserver.health, kcm.health, scheduler.health],
  };
  writeState(state);
  return state;
}

export interface DownOptions {
  runDir: string;
  /**
   * Keep the run directory after stopping: all of it (`true`: logs and data, e.g. to start the cluster again), or
   * only the logs (`'logs'`: components' logs and pod logs; the data, gigabytes after an e2e run, goes).
   */
  keep: boolean | 'logs';
  graceMs?: number;
}

export interface DownResult {
  stopped: number;
  podProcesses: number;
  removed: boolean;
}

/**
 * Last-resort stop for a process that is exiting (a test run interrupted with Ctrl-C): SIGTERM to every
 * recorded process group, synchronously and without waiting. Kubelets stop their pods on SIGTERM.
 */
export function signalClusterSync(runDir: string): number {
  const recorded = [...(readState(runDir)?.processes ?? []), ...readProcesses(runDir)].filter(isRunning);
  for (const p of recorded) signalGroup(p.pid, 'SIGTERM');
  return recorded.length;
}

export async function down(opts: DownOptions): Promise<DownResult> {
  const runDir = resolve(opts.runDir);
  return withFileLock(runLock(runDir), () => stopAndRemove(runDir, { keep: opts.keep, graceMs: opts.graceMs ?? 10_000 }));
}

async function stopAndRemove(runDir: string, opts: { keep: boolean | 'logs'; graceMs: number }): Promise<DownResult> {
  const state = readState(runDir);
  const recorded = [...(state?.processes ?? []), ...readProcesses(runDir)];
  const unique = [...new Map(recorded.map((p) => [p.pid, p])).values()];
  const running = unique.filter(isRunning);
  // Stop in tiers, clients before servers: with etcd gone first, the API server's shutdown waits for its
  // storage and the whole stop takes seconds longer. Kubelets go first and stop their pods; pod processes
  // they left are stopped next.
  const tier = (p: ProcessRecord) =>
    p.name.startsWith('kubelet-') || p.name.startsWith('node-') ? 0 : p.name === 'kube-apiserver' ? 2 : ['etcd', 'minio', 'registry'].includes(p.name) ? 3 : 1;
  await stopProcesses(running.filter((p) => tier(p) === 0), { graceMs: opts.graceMs });
  const podProcesses = await stopPodProcesses(nodeRootsOf(runDir), opts.graceMs);
  for (const t of [1, 2, 3]) await stopProcesses(running.filter((p) => tier(p) === t), { graceMs: opts.graceMs });
  await removeRealNodeLeftovers(runDir);
  let removed = false;
  if (opts.keep !== true && existsSync(runDir)) {
    assertDeletable(runDir);
    unmountUnder(runDir);
    detachLoopDevicesUnder(runDir);
    if (opts.keep === 'logs') {
      removeAllButLogs(runDir);
    } else {
      rmSync(runDir, { recursive: true, force: true });
      removed = true;
    }
  }
  return { stopped: running.length, podProcesses, removed };
}

/** Paths of a run directory (relative) that hold logs: the components' and, on every node, the pods'. */
export function isLogPath(relativePath: string): boolean {
  return /^(logs|nodes\/[^/]+\/(var-log|var\/log))(\/|$)/.test(relativePath);
}

/** Removes everything of a stopped cluster's run directory but its logs (and its small top-level files). */
function removeAllButLogs(runDir: string): void {
  const prune = (relative: string): void => {
    for (const entry of readdirSync(join(runDir, relative), { withFileTypes: true })) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (isLogPath(path) || (!relative && entry.isFile())) continue;
      // A folder on the way to logs (nodes/, nodes/<name>/, nodes/<name>/var) is pruned inside; others go whole.
      if (entry.isDirectory() && /^nodes(\/[^/]+(\/var)?)?$/.test(path)) prune(path);
      else rmSync(join(runDir, path), { recursive: true, force: true });
    }
  };
  prune('');
}

/**
 * What real nodes leave outside their namespaces once their processes are gone: their cgroups and the network
 * (namespaces, bridge, veths, routes). Nothing for the stand-in.
 */
async function removeRealNodeLeftovers(runDir: string): Promise<void> {
  const network = readNetwork(runDir);
  if (!network) return;
  const left = network.nodes.flatMap((n) => removeCgroup(nodeCgroupRoot(network, n.name)));
  if (left.length > 0) throw new Error(`could not remove the cgroups ${left.join(', ')}: processes still in them`);
  await deleteNetwork(runDir);
}

function nodeRootsOf(runDir: string): string[] {
  const dir = join(runDir, 'nodes');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(dir, d.name));
}

function assertDeletable(runDir: string): void {
  if (existsSync(join(runDir, MARKER)) || readdirSync(runDir).length === 0) return;
  throw new Error(`refusing to delete ${runDir}: it is not empty and not a cairn run directory (no ${MARKER})`);
}

/**
 * Deleting a tree with a bind mount inside would delete the mount's source too (a hostPath could be anywhere).
 * Pod mounts live in private mount namespaces and vanish with their processes; should one have leaked into
 * ours, detach it first, and refuse to delete if that fails.
 */
function unmountUnder(runDir: string): void {
  const mounts = () => readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => m !== undefined && (m === runDir || m.startsWith(`${runDir}/`)));
  for (const m of mounts().sort((a, b) => b.length - a.length)) {
    try {
      execFileSync('umount', ['-l', m], { stdio: 'ignore' });
    } catch {
      // checked below
    }
  }
  const left = mounts();
  if (left.length > 0) throw new Error(`refusing to delete ${runDir}: still mounted inside it: ${left.join(', ')}`);
}

/**
 * Block volumes of the CSI host-path driver are image files under the run directory attached to loop devices;
 * pods stopped with the cluster are not unstaged, so their loop devices are detached here.
 */
function detachLoopDevicesUnder(runDir: string): void {
  let listing: string;
  try {
    listing = execFileSync('losetup', ['--list', '--noheadings', '--output', 'NAME,BACK-FILE'], { encoding: 'utf8' });
  } catch {
    return; // no losetup or no loop support: nothing was attached
  }
  for (const line of listing.split('\n')) {
    const [device, file] = line.trim().split(/\s+/, 2);
    if (device && file && file.startsWith(`${runDir}/`)) {
      try {
        execFileSync('losetup', ['-d', device], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
  }
}

export interface ComponentHealth {
  name: string;
  healthy: boolean;
  detail: string;
}

export interface HealthReport {
  healthy: boolean;
  components: ComponentHealth[];
}

export async function clusterHealth(state: ClusterState): Promise<HealthReport> {
  const components: ComponentHealth[] = [];
  const byName = new Map(state.processes.map((p) => [p.name, p]));
  for (const h of state.health) {
    const proc = byName.get(h.name);
    const alive = proc ? isRunning(proc) : true;
    const ok = alive && (await isHealthy(h.url, h.adminTls ? adminTls(state.pki) : { insecure: h.insecure ?? false }));
    components.push({ name: h.name, healthy: ok, detail: alive ? `${h.url}${proc ? ` pid ${proc.pid}` : ''}` : 'process exited' });
  }
  for (const p of state.processes.filter((p) => !state.health.some((h) => h.name === p.name))) {
    components.push({ name: p.name, healthy: isRunning(p), detail: isRunning(p) ? `pid ${p.pid}` : 'process exited' });
  }
  if (state.nodes.length > 0) {
    let ready: string[] = [];
    try {
      ready = await readyNodeNames(state.apiServerUrl, state.pki);
    } catch {
      // reported as not ready below
    }
    for (const n of state.nodes) {
      const ok = ready.includes(n.name);
      components.push({ name: `node/${n.name}`, healthy: ok, detail: `${n.ip} ${ok ? 'Ready' : 'not Ready'}` });
    }
  }
  return { healthy: components.every((c) => c.healthy), components };
}
