/**
 * The simulated nodes: one kubelet stand-in process per node (tools/local-cluster/kubelet/main.ts), each on its
 * own loopback address <subnet>.<i+1> with its own root directory, plus the volume provisioner once. Both are
 * written separately; while they do not exist yet the control plane still starts, without nodes.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StopWaiting, waitFor } from '../../test/support/wait.js';
import { adminTls, ProcessExitedError } from './control-plane.js';
import type { Pki } from './pki.js';
import { freePort } from './ports.js';
import { httpGet } from './probe.js';
import { isRunning, startProcess, stopProcesses, type ProcessRecord } from './processes.js';
import { repoRoot } from './paths.js';
import type { NodeInfo } from './state.js';

/** The kubelet serving certificate covers <subnet>.1..<subnet>.<MAX_NODE_OCTET>; node i uses <subnet>.<i+1>. */
export const MAX_NODE_OCTET = 20;
export const MAX_NODES = MAX_NODE_OCTET - 1;

/**
 * The loopback /24 this cluster's nodes live in, `127.<a>.<b>`, derived from the run directory. Pods share their
 * node's address (host network), so two clusters on one machine whose nodes had the same addresses would fight over
 * every fixed pod port (a node agent's health port, say); a subnet per run directory keeps them apart, and stays the
 * same when a kept cluster is reused. `a` is never 0, so 127.0.0.1 (the control plane) is never a node.
 */
export function nodeSubnet(runDir: string): string {
  const h = createHash('sha256').update(runDir).digest();
  return `127.${1 + (h[0]! % 254)}.${h[1]!}`;
}

export const KUBELET_MAIN = 'tools/local-cluster/kubelet/main.ts';
export const PROVISIONER_MAIN = 'tools/local-cluster/provisioner/main.ts';

export function nodeName(i: number): string {
  return `local-node-${i}`;
}

export function plannedNodes(runDir: string, count: number): Omit<NodeInfo, 'port'>[] {
  return Array.from({ length: count }, (_, k) => {
    const name = nodeName(k + 1);
    return { name, ip: `${nodeSubnet(runDir)}.${k + 2}`, rootDir: join(runDir, 'nodes', name) };
  });
}

export interface NodesContext {
  runDir: string;
  pki: Pki;
  kubeconfigPath: string;
  apiServerUrl: string;
  onStarted: (p: ProcessRecord) => void;
  log: (line: string) => void;
}

export interface NodesStart {
  nodes: NodeInfo[];
  kubelets: ProcessRecord[];
  provisioner?: ProcessRecord;
}

/** Runs a tools/local-cluster TypeScript entry point with this Node.js and tsx, from the repository root. */
function startTsTool(name: string, entry: string, args: string[], logFile: string): ProcessRecord {
  return startProcess({
    name,
    command: process.execPath,
    args: ['--import', 'tsx', entry, ...args],
    cwd: repoRoot(),
    logFile,
  });
}

export async function startNodes(ctx: NodesContext, count: number): Promise<NodesStart> {
  const planned = plannedNodes(ctx.runDir, count);
  const logs = join(ctx.runDir, 'logs');
  const result: NodesStart = { nodes: [], kubelets: [] };
  const haveKubelet = existsSync(join(repoRoot(), KUBELET_MAIN));
  for (const node of planned) {
    mkdirSync(node.rootDir, { recursive: true });
    const port = await freePort(node.ip);
    result.nodes.push({ ...node, port });
    if (!haveKubelet) continue;
    const proc = startTsTool(`kubelet-${node.name}`, KUBELET_MAIN, [
      '--kubeconfig', ctx.kubeconfigPath, '--node-name', node.name, '--node-ip', node.ip, '--root-dir', node.rootDir,
      '--port', String(port), '--tls-cert-file', ctx.pki.kubeletCert, '--tls-key-file', ctx.pki.kubeletKey,
      '--ca-file', ctx.pki.caCert, '--api-server', ctx.apiServerUrl,
      '--log-file', join(logs, `kubelet-${node.name}.log`),
    ], join(logs, `kubelet-${node.name}.stdout.log`));
    ctx.onStarted(proc);
    result.kubelets.push(proc);
  }
  if (!haveKubelet) ctx.log(`warning: ${KUBELET_MAIN} does not exist yet: no kubelet started, nodes will not register`);

  result.provisioner = startProvisioner(ctx);
  return result;
}

/** The volume provisioner of the default StorageClass (once per cluster, whatever runs the nodes). */
export function startProvisioner(ctx: NodesContext): ProcessRecord | undefined {
  if (!existsSync(join(repoRoot(), PROVISIONER_MAIN))) {
    ctx.log(`warning: ${PROVISIONER_MAIN} does not exist yet: no volume provisioner started`);
    return undefined;
  }
  const logs = join(ctx.runDir, 'logs');
  const proc = startTsTool('provisioner', PROVISIONER_MAIN, [
    '--kubeconfig', ctx.kubeconfigPath, '--run-dir', ctx.runDir, '--log-file', join(logs, 'provisioner.log'),
  ], join(logs, 'provisioner.stdout.log'));
  ctx.onStarted(proc);
  return proc;
}

interface NodeList {
  items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[];
}

/** Names of the nodes whose Ready condition is True. */
export async function readyNodeNames(apiServerUrl: string, pki: Pki): Promise<string[]> {
  const res = await httpGet(`${apiServerUrl}/api/v1/nodes`, adminTls(pki));
  if (res.status !== 200) throw new Error(`GET /api/v1/nodes: HTTP ${res.status}`);
  const list = JSON.parse(res.body) as NodeList;
  return list.items
    .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((n) => n.metadata.name);
}

export async function awaitNodesReady(ctx: NodesContext, started: NodesStart, timeoutMs: number): Promise<void> {
  if (started.kubelets.length === 0) return;
  const want = started.nodes.map((n) => n.name);
  await waitFor(
    async () => {
      const dead = started.kubelets.find((k) => !isRunning(k));
      if (dead) throw new StopWaiting(new ProcessExitedError(dead));
      const ready = await readyNodeNames(ctx.apiServerUrl, ctx.pki);
      return want.every((n) => ready.includes(n));
    },
    { timeoutMs, intervalMs: 200, description: `nodes ${want.join(', ')} Ready (logs: ${join(ctx.runDir, 'logs')})` },
  );
}

/**
 * Pod processes a kubelet stand-in left behind. The kubelet records each pod process it starts (in its own
 * process group) as a file under <node-root>/pids/; the file holds the pid, or JSON {pid, startTicks}.
 */
export function leftoverPodProcesses(nodeRoots: string[]): Pick<ProcessRecord, 'pid' | 'startTicks'>[] {
  const out: Pick<ProcessRecord, 'pid' | 'startTicks'>[] = [];
  for (const root of nodeRoots) {
    const dir = join(root, 'pids');
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir)) {
      const rec = parsePidFile(entry, readFileSafe(join(dir, entry)));
      if (rec) out.push(rec);
    }
  }
  return out;
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export function parsePidFile(fileName: string, content: string): Pick<ProcessRecord, 'pid' | 'startTicks'> | undefined {
  const text = content.trim();
  if (text.startsWith('{')) {
    try {
      const j = JSON.parse(text) as { pid?: unknown; startTicks?: unknown };
      if (typeof j.pid === 'number' && j.pid > 1) return { pid: j.pid, startTicks: typeof j.startTicks === 'number' ? j.startTicks : 0 };
    } catch {
      // fall through to the other forms
    }
  }
  const fromContent = /^(\d+)/.exec(text)?.[1];
  const fromName = /^(\d+)(?:\.pid)?$/.exec(fileName)?.[1];
  const pid = Number(fromContent ?? fromName);
  return Number.isInteger(pid) && pid > 1 ? { pid, startTicks: 0 } : undefined;
}

export async function stopPodProcesses(nodeRoots: string[], graceMs: number): Promise<number> {
  const procs = leftoverPodProcesses(nodeRoots).filter(isRunning);
  await stopProcesses(procs, { graceMs });
  return procs.length;
}
