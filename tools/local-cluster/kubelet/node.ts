/**
 * The Node object and its heartbeats: registration (labels, addresses, capacity, kubelet endpoint, nodeInfo),
 * status with a fresh Ready heartbeat every `statusIntervalMs`, and the node Lease in kube-node-lease.
 */
import { readFileSync, statfsSync } from 'node:fs';
import { release, totalmem } from 'node:os';
import type { Logger } from 'pino';
import { isConflict, isNotFound, mergePatch, type KubeletApi, errorMessage } from './kube-api.js';

export interface NodeIdentity {
  nodeName: string;
  nodeIp: string;
  port: number;
  rootDir: string;
  /** The control plane's version; the kubelet reports the same. */
  kubeletVersion: string;
}

/** Annotation on the Node telling the provisioner where this node's root directory is. */
export const ROOT_DIR_ANNOTATION = 'cairn.local/root-dir';

/** Taints a node lifecycle controller would remove from a Ready node. */
const CONDITION_TAINTS = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'];

export const NODE_CAPACITY = { cpu: '8', pods: '110' } as const;

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function readId(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8').trim() || fallback;
  } catch {
    return fallback;
  }
}

export function nodeCapacity(rootDir: string): Record<string, string> {
  const fs = statfsSync(rootDir);
  return {
    cpu: NODE_CAPACITY.cpu,
    memory: `${Math.floor(totalmem() / 1024)}Ki`,
    pods: NODE_CAPACITY.pods,
    'ephemeral-storage': `${Math.floor((fs.blocks * fs.bsize) / 1024)}Ki`,
  };
}

export function nodeLabels(nodeName: string): Record<string, string> {
  return {
    'kubernetes.io/hostname': nodeName,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': 'amd64',
  };
}

export function nodeStatus(id: NodeIdentity, now: Date, readySince: Date): object {
  const t = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const since = readySince.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const capacity = nodeCapacity(id.rootDir);
  const cond = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: t,
    lastTransitionTime: since,
  });
  return {
    capacity,
    allocatable: capacity,
    conditions: [
      cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      cond('Ready', 'True', 'KubeletReady', 'cairn local kubelet is posting ready status'),
    ],
    addresses: [
      { type: 'InternalIP', address: id.nodeIp },
      { type: 'Hostname', address: id.nodeName },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: id.port } },
    // The API server then proxies WebSocket exec straight to us (we speak no SPDY).
    declaredFeatures: ['ExtendWebSocketsToKubelet'],
    nodeInfo: {
      machineID: readId('/etc/machine-id', id.nodeName),
      systemUUID: id.nodeName,
      bootID: readId('/proc/sys/kernel/random/boot_id', id.nodeName),
      kernelVersion: release(),
      osImage: 'cairn local test bed',
      containerRuntimeVersion: 'cairn-local://0.1.0',
      kubeletVersion: id.kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

export class NodeHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private readonly readySince = new Date();

  private readonly api: KubeletApi;
  private readonly id: NodeIdentity;
  private readonly log: Logger;
  private readonly statusIntervalMs: number;

  constructor(o: { api: KubeletApi; id: NodeIdentity; log: Logger; statusIntervalMs?: number | undefined }) {
    this.api = o.api;
    this.id = o.id;
    this.log = o.log;
    this.statusIntervalMs = o.statusIntervalMs ?? 10_000;
  }

  async register(): Promise<void> {
    const { nodeName } = this.id;
    const meta = {
      labels: nodeLabels(nodeName),
      annotations: { [ROOT_DIR_ANNOTATION]: this.id.rootDir, 'node.alpha.kubernetes.io/ttl': '0' },
    };
    try {
      await this.api.core.createNode({ body: { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, ...meta }, spec: {} } });
      this.log.info({ node: nodeName }, 'node registered');
    } catch (err) {
      if (!isConflict(err)) throw err;
      await this.api.core.patchNode({ name: nodeName, body: { metadata: meta } }, mergePatch);
      this.log.info({ node: nodeName }, 'node already registered; updated');
    }
    await this.beat();
  }

  /**
   * The API server's TaintNodesByCondition admission taints every new Node not-ready; on a real cluster the node
   * lifecycle controller lifts it once the node is Ready. The test bed runs no such controller, so the kubelet
   * stand-in lifts it itself (after posting Ready).
   */
  private async clearConditionTaints(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const node = await this.api.core.readNode({ name: this.id.nodeName });
      const taints = node.spec?.taints ?? [];
      const kept = taints.filter((t) => !CONDITION_TAINTS.includes(t.key));
      if (kept.length === taints.length) return;
      try {
        await this.api.core.patchNode(
          { name: this.id.nodeName, body: { metadata: { resourceVersion: node.metadata?.resourceVersion }, spec: { taints: kept } } },
          mergePatch,
        );
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= 10) throw err;
      }
    }
  }

  start(): void {
    this.timer = setInterval(() => {
      void this.beat().catch((err: unknown) => this.log.warn({ err: errorMessage(err) }, 'node heartbeat failed'));
    }, this.statusIntervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async beat(): Promise<void> {
    const now = new Date();
    await this.api.core.patchNodeStatus({ name: this.id.nodeName, body: { status: nodeStatus(this.id, now, this.readySince) } }, mergePatch);
    await this.renewLease(now);
    await this.clearConditionTaints();
  }

  private async renewLease(now: Date): Promise<void> {
    const name = this.id.nodeName;
    const namespace = 'kube-node-lease';
    const spec = { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime(now) };
    try {
      await this.api.coordination.patchNamespacedLease({ name, namespace, body: { spec } }, mergePatch);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.api.coordination.createNamespacedLease({
        namespace,
        body: { metadata: { name, namespace }, spec: { holderIdentity: name, leaseDurationSeconds: 40 } },
      });
      await this.api.coordination.patchNamespacedLease({ name, namespace, body: { spec } }, mergePatch);
    }
  }
}
