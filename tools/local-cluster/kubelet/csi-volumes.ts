/**
 * The real kubelet's CSI node calls for PVs with `spec.csi`: NodeStageVolume (when the driver has
 * STAGE_UNSTAGE_VOLUME) at `<kubelet>/plugins/kubernetes.io/csi/<driver>/<sha256(handle)>/globalmount`, then
 * NodePublishVolume at `pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount` (Filesystem) or
 * `pods/<uid>/volumeDevices/kubernetes.io~csi/<pv>` (Block), over the driver's socket
 * `<kubelet>/plugins/<driver>/csi.sock`; and their reverses when the pod goes. What was published is recorded
 * next to it in `vol_data.json` (as the kubelet does), so a restarted kubelet can still unpublish.
 */
import * as grpc from '@grpc/grpc-js';
import { createHash } from 'node:crypto';
import { existsSync, symlinkSync, unlinkSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { callUnary, csiProtoPath, loadCsiServices, type CsiServices } from '../csi/proto.js';
import { kubeletDir, podDir, podsDir, type NodeLayout } from './layout.js';

/** Recorded per published volume, like the kubelet's vol_data.json. */
export interface CsiVolumeData {
  driverName: string;
  volumeHandle: string;
  specVolumeID: string;
  nodeName: string;
  stagingPath?: string | undefined;
  targetPath: string;
  block: boolean;
}

export function driverSocket(l: NodeLayout, driver: string): string {
  return join(kubeletDir(l), 'plugins', driver, 'csi.sock');
}

function stagingPath(l: NodeLayout, driver: string, handle: string, block: boolean): string {
  const hash = createHash('sha256').update(handle).digest('hex');
  return block
    ? join(kubeletDir(l), 'plugins/kubernetes.io/csi/volumeDevices/staging', driver, hash)
    : join(kubeletDir(l), 'plugins/kubernetes.io/csi', driver, hash, 'globalmount');
}

export function csiTargetPath(l: NodeLayout, podUid: string, pvName: string, block: boolean): string {
  return block
    ? join(podDir(l, podUid), 'volumeDevices', 'kubernetes.io~csi', pvName)
    : join(podDir(l, podUid), 'volumes', 'kubernetes.io~csi', pvName, 'mount');
}

function volDataFile(targetPath: string, block: boolean): string {
  return block ? `${targetPath}.vol_data.json` : join(dirname(targetPath), 'vol_data.json');
}

/** A CSI volume that cannot be published yet (no driver on this node, a failing call); the pod worker retries. */
export class CsiNotReadyError extends Error {}

export class CsiNodeClient {
  private services: CsiServices | undefined;
  private readonly clients = new Map<string, grpc.Client>();

  constructor(private readonly o: { layout: NodeLayout; nodeName: string; log: (line: string) => void }) {}

  private loadServices(): CsiServices {
    if (this.services) return this.services;
    const proto = this.o.layout.sharedDir ? csiProtoPath(this.o.layout.sharedDir) : undefined;
    if (!proto || !existsSync(proto)) throw new CsiNotReadyError('CSI is not enabled on this cluster (no csi.proto in the run directory)');
    this.services = loadCsiServices(proto);
    return this.services;
  }

  /** A client on a driver's socket; undefined while the driver has no socket on this node. */
  client(kind: 'Identity' | 'Node', driver: string): grpc.Client | undefined {
    const socket = driverSocket(this.o.layout, driver);
    if (!existsSync(socket)) return undefined;
    const key = `${kind}:${driver}`;
    let c = this.clients.get(key);
    if (!c) {
      const Ctor = this.loadServices()[kind];
      c = new Ctor(`unix://${shortSocketPath(socket)}`, grpc.credentials.createInsecure());
      this.clients.set(key, c);
    }
    return c;
  }

  private async nodeCall<Res>(driver: string, method: string, req: object): Promise<Res> {
    const c = this.client('Node', driver);
    if (!c) throw new CsiNotReadyError(`driver ${driver} is not registered on node ${this.o.nodeName} (no ${driverSocket(this.o.layout, driver)})`);
    try {
      return await callUnary<Res>(c, method, req);
    } catch (err) {
      throw new CsiNotReadyError(`${method} of driver ${driver}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Stages (if the driver asks for it) and publishes the PV for the pod; returns the published path. */
  async publish(o: { pv: V1PersistentVolume; podUid: string; readOnly: boolean }): Promise<string> {
    const csi = o.pv.spec?.csi;
    const pvName = o.pv.metadata?.name ?? '';
    if (!csi) throw new Error(`persistentvolume ${pvName} has no spec.csi`);
    const block = o.pv.spec?.volumeMode === 'Block';
    const accessModes = o.pv.spec?.accessModes ?? [];
    const capability = {
      ...(block ? { block: {} } : { mount: { fs_type: csi.fsType ?? '', mount_flags: o.pv.spec?.mountOptions ?? [] } }),
      access_mode: { mode: accessModes.includes('ReadWriteMany') ? 'MULTI_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER' },
    };
    const caps = await this.nodeCall<{ capabilities: { rpc?: { type: string } }[] }>(csi.driver, 'NodeGetCapabilities', {});
    const staged = caps.capabilities.some((c) => c.rpc?.type === 'STAGE_UNSTAGE_VOLUME')
      ? stagingPath(this.o.layout, csi.driver, csi.volumeHandle, block)
      : undefined;
    const context = csi.volumeAttributes ?? {};
    if (staged) {
      await mkdir(staged, { recursive: true });
      await this.nodeCall(csi.driver, 'NodeStageVolume', {
        volume_id: csi.volumeHandle, staging_target_path: staged, volume_capability: capability, volume_context: context,
      });
    }
    const target = csiTargetPath(this.o.layout, o.podUid, pvName, block);
    await mkdir(dirname(target), { recursive: true });
    const data: CsiVolumeData = {
      driverName: csi.driver, volumeHandle: csi.volumeHandle, specVolumeID: pvName, nodeName: this.o.nodeName,
      stagingPath: staged, targetPath: target, block,
    };
    // Recorded before the call: an interrupted publish is still undone when the pod goes.
    await writeFile(volDataFile(target, block), JSON.stringify(data));
    await this.nodeCall(csi.driver, 'NodePublishVolume', {
      volume_id: csi.volumeHandle, staging_target_path: staged ?? '', target_path: target, volume_capability: capability,
      readonly: o.readOnly || csi.readOnly === true, volume_context: context,
    });
    this.o.log(`CSI: published ${pvName} (${csi.driver} ${csi.volumeHandle}) at ${target}`);
    return target;
  }

  /** NodeUnpublish every CSI volume of a pod, then NodeUnstage those no other pod on the node still uses. */
  async unpublishPod(podUid: string): Promise<void> {
    const records = await volumeDataIn(podDir(this.o.layout, podUid));
    for (const r of records) {
      await this.nodeCall(r.driverName, 'NodeUnpublishVolume', { volume_id: r.volumeHandle, target_path: r.targetPath });
      await rm(volDataFile(r.targetPath, r.block), { force: true });
      this.o.log(`CSI: unpublished ${r.specVolumeID} from ${r.targetPath}`);
      if (!r.stagingPath) continue;
      const others = await this.otherPodsUsing(podUid, r.volumeHandle);
      if (others) continue;
      await this.nodeCall(r.driverName, 'NodeUnstageVolume', { volume_id: r.volumeHandle, staging_target_path: r.stagingPath });
      this.o.log(`CSI: unstaged ${r.specVolumeID} from ${r.stagingPath}`);
    }
  }

  private async otherPodsUsing(exceptUid: string, handle: string): Promise<boolean> {
    const uids = await readdir(podsDir(this.o.layout)).catch(() => [] as string[]);
    for (const uid of uids.filter((u) => u !== exceptUid)) {
      if ((await volumeDataIn(podDir(this.o.layout, uid))).some((r) => r.volumeHandle === handle)) return true;
    }
    return false;
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}

/** The vol_data records under a pod directory (Filesystem and Block). */
export async function volumeDataIn(dir: string): Promise<CsiVolumeData[]> {
  const out: CsiVolumeData[] = [];
  const fsDir = join(dir, 'volumes', 'kubernetes.io~csi');
  for (const pv of await readdir(fsDir).catch(() => [] as string[])) {
    const f = join(fsDir, pv, 'vol_data.json');
    const r = await readFile(f, 'utf8').then((t) => JSON.parse(t) as CsiVolumeData, () => undefined);
    if (r) out.push(r);
  }
  const blockDir = join(dir, 'volumeDevices', 'kubernetes.io~csi');
  for (const f of await readdir(blockDir).catch(() => [] as string[])) {
    if (!f.endsWith('.vol_data.json')) continue;
    const r = await readFile(join(blockDir, f), 'utf8').then((t) => JSON.parse(t) as CsiVolumeData, () => undefined);
    if (r) out.push(r);
  }
  return out;
}

/**
 * A unix socket path must fit in 108 bytes; a deep run directory can exceed that, so a long one is reached
 * through a short symlink in /tmp (connect() follows symlinks).
 */
function shortSocketPath(socket: string): string {
  if (socket.length < 100) return socket;
  const link = join('/tmp', `cairn-csi-${createHash('sha256').update(socket).digest('hex').slice(0, 16)}.sock`);
  try {
    unlinkSync(link);
  } catch {
    // not there yet
  }
  symlinkSync(socket, link);
  return link;
}
