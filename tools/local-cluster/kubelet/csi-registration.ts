/**
 * Registers CSI drivers as the kubelet does, without node-driver-registrar (whose module the proxy here does not
 * serve): a driver that serves `<kubelet>/plugins/<driver>/csi.sock` on this node is asked for its name
 * (GetPluginInfo) and node ID (NodeGetInfo) and listed in this node's CSINode (created owned by the Node) and in
 * the Node's `csi.volume.kubernetes.io/nodeid` annotation; a driver whose socket goes away is removed again.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageV1Api, type KubeConfig, type CoreV1Api, type V1CSINodeDriver } from '@kubernetes/client-node';
import { callUnary } from '../csi/proto.js';
import { CsiNotReadyError, type CsiNodeClient } from './csi-volumes.js';
import { errorMessage } from './kube-api.js';
import { kubeletDir, type NodeLayout } from './layout.js';

const NODE_ID_ANNOTATION = 'csi.volume.kubernetes.io/nodeid';

export interface CsiRegistrationOptions {
  layout: NodeLayout;
  nodeName: string;
  config: KubeConfig;
  core: CoreV1Api;
  csi: CsiNodeClient;
  log: (line: string) => void;
  intervalMs?: number;
}

export class CsiRegistration {
  private timer: NodeJS.Timeout | undefined;
  private registered = new Map<string, V1CSINodeDriver>();
  private running = false;
  private readonly storage: StorageV1Api;

  constructor(private readonly o: CsiRegistrationOptions) {
    this.storage = o.config.makeApiClient(StorageV1Api);
  }

  start(): void {
    this.timer = setInterval(() => void this.scan(), this.o.intervalMs ?? 1000);
    void this.scan();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async scan(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const pluginsDir = join(kubeletDir(this.o.layout), 'plugins');
      const names = (await readdir(pluginsDir).catch(() => [] as string[]))
        .filter((n) => n !== 'kubernetes.io' && existsSync(join(pluginsDir, n, 'csi.sock')));
      const found = new Map<string, V1CSINodeDriver>();
      for (const dir of names) {
        const known = this.registered.get(dir);
        if (known) {
          found.set(dir, known);
          continue;
        }
        const driver = await this.identify(dir);
        if (driver) found.set(dir, driver);
      }
      const same = found.size === this.registered.size && [...found.keys()].every((k) => this.registered.has(k));
      if (same) return;
      await this.write([...found.values()]);
      for (const d of found.values()) if (![...this.registered.values()].some((r) => r.name === d.name)) this.o.log(`CSI: registered driver ${d.name} (node ID ${d.nodeID})`);
      for (const d of this.registered.values()) if (![...found.values()].some((r) => r.name === d.name)) this.o.log(`CSI: driver ${d.name} went away`);
      this.registered = found;
    } catch (err) {
      if (!(err instanceof CsiNotReadyError)) this.o.log(`CSI registration: ${errorMessage(err)}`);
    } finally {
      this.running = false;
    }
  }

  /** Name and node ID from the driver itself; undefined while it does not answer yet. */
  private async identify(dir: string): Promise<V1CSINodeDriver | undefined> {
    const identity = this.o.csi.client('Identity', dir);
    const node = this.o.csi.client('Node', dir);
    if (!identity || !node) return undefined;
    try {
      const info = await callUnary<{ name: string }>(identity, 'GetPluginInfo', {}, 5_000);
      const nodeInfo = await callUnary<{ node_id: string; accessible_topology?: { segments?: Record<string, string> } | null; max_volumes_per_node?: string }>(node, 'NodeGetInfo', {}, 5_000);
      const max = Number(nodeInfo.max_volumes_per_node ?? 0);
      return {
        name: info.name,
        nodeID: nodeInfo.node_id,
        topologyKeys: Object.keys(nodeInfo.accessible_topology?.segments ?? {}),
        ...(max > 0 ? { allocatable: { count: max } } : {}),
      };
    } catch {
      return undefined;
    }
  }

  private async write(drivers: V1CSINodeDriver[]): Promise<void> {
    const name = this.o.nodeName;
    const node = await this.o.core.readNode({ name });
    const existing = await this.storage.readCSINode({ name }).catch(() => undefined);
    if (existing) {
      existing.spec.drivers = drivers;
      await this.storage.replaceCSINode({ name, body: existing });
    } else {
      await this.storage.createCSINode({
        body: {
          metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata?.uid ?? '' }] },
          spec: { drivers },
        },
      });
    }
    const ids = Object.fromEntries(drivers.map((d) => [d.name, d.nodeID]));
    await this.o.core.patchNode({
      name,
      body: [{ op: 'add', path: `/metadata/annotations/${NODE_ID_ANNOTATION.replace('/', '~1')}`, value: JSON.stringify(ids) }],
    });
  }
}
