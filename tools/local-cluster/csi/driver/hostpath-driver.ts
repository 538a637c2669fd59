/**
 * The test bed's CSI host-path driver (`hostpath.csi.k8s.io`): cairn's own stand-in for the kubernetes-csi
 * host-path driver, whose module the Go proxy here refuses. Volumes are directories (Filesystem) or sparse image
 * files attached through a loop device (Block) under one state directory in the run directory, which every
 * node sees alike (like network storage); a snapshot is a copy of the volume taken at CreateSnapshot. The node
 * service stages a volume by bind-mounting it at the staging path and publishes it by bind-mounting the staging
 * path at the pod's target path, so the mounts must propagate to the host (the node plugin's pod mounts
 * /var/lib/kubelet with mountPropagation Bidirectional).
 */
import * as grpc from '@grpc/grpc-js';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile, truncate } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { CsiServices } from '../proto.js';

const run = promisify(execFile);

export const DRIVER_NAME = 'hostpath.csi.k8s.io';
export const DRIVER_VERSION = 'cairn-local-1';
const DEFAULT_CAPACITY = 1024 ** 3;

export interface DriverOptions {
  services: CsiServices;
  /** Where volumes and snapshots live: `<run-dir>/csi/hostpath`. */
  stateDir: string;
  /** Node name reported by NodeGetInfo (node plugin only). */
  nodeId: string;
  log: (line: string) => void;
}

class CsiError extends Error {
  constructor(readonly code: grpc.status, message: string) {
    super(message);
  }
}

interface VolumeRecord {
  id: string;
  name: string;
  capacityBytes: number;
  block: boolean;
  source?: { snapshotId?: string; volumeId?: string };
}

/** The VolumeSnapshotClass parameter that makes CreateSnapshot fail (see createSnapshot). */
export const FAIL_SNAPSHOT_PARAMETER = 'failSnapshot';

interface SnapshotRecord {
  id: string;
  name: string;
  sourceVolumeId: string;
  sizeBytes: number;
  block: boolean;
  createdAtSeconds: number;
}

interface VolumeCapability {
  block?: object | null;
  mount?: { fs_type?: string; mount_flags?: string[] } | null;
  access_type?: string;
}

/** IDs derive from the CO's names, so a retried Create* returns the same object (CSI requires idempotence). */
function idFor(prefix: string, name: string): string {
  return `${prefix}-${createHash('sha256').update(name).digest('hex').slice(0, 20)}`;
}

function isBlock(caps: VolumeCapability[] | undefined): boolean {
  return (caps ?? []).some((c) => c.block !== undefined && c.block !== null);
}

export class HostPathDriver {
  private readonly volumesDir: string;
  private readonly snapshotsDir: string;

  constructor(private readonly o: DriverOptions) {
    this.volumesDir = join(o.stateDir, 'volumes');
    this.snapshotsDir = join(o.stateDir, 'snapshots');
  }

  /** Adds the Identity, Controller and Node services to a gRPC server. */
  register(server: grpc.Server): void {
    const s = this.o.services;
    server.addService(s.Identity.service, {
      GetPluginInfo: this.unary('GetPluginInfo', async () => ({ name: DRIVER_NAME, vendor_version: DRIVER_VERSION })),
      GetPluginCapabilities: this.unary('GetPluginCapabilities', async () => ({
        capabilities: [{ service: { type: 'CONTROLLER_SERVICE' } }],
      })),
      Probe: this.unary('Probe', async () => ({ ready: { value: true } })),
    });
    server.addService(s.Controller.service, {
      ControllerGetCapabilities: this.unary('ControllerGetCapabilities', async () => ({
        capabilities: ['CREATE_DELETE_VOLUME', 'CREATE_DELETE_SNAPSHOT', 'LIST_SNAPSHOTS', 'CLONE_VOLUME']
          .map((type) => ({ rpc: { type } })),
      })),
      CreateVolume: this.unary('CreateVolume', (r) => this.createVolume(r as CreateVolumeRequest)),
      DeleteVolume: this.unary('DeleteVolume', (r) => this.deleteVolume((r as { volume_id: string }).volume_id)),
      ValidateVolumeCapabilities: this.unary('ValidateVolumeCapabilities', async (r) => {
        const req = r as { volume_id: string; volume_capabilities: VolumeCapability[] };
        await this.readVolume(req.volume_id);
        return { confirmed: { volume_capabilities: req.volume_capabilities } };
      }),
      CreateSnapshot: this.unary('CreateSnapshot', (r) => this.createSnapshot(r as { name: string; source_volume_id: string; parameters?: Record<string, string> })),
      DeleteSnapshot: this.unary('DeleteSnapshot', (r) => this.deleteSnapshot((r as { snapshot_id: string }).snapshot_id)),
      ListSnapshots: this.unary('ListSnapshots', (r) => this.listSnapshots(r as { snapshot_id?: string; source_volume_id?: string })),
    });
    server.addService(s.Node.service, {
      NodeGetInfo: this.unary('NodeGetInfo', async () => ({ node_id: this.o.nodeId, max_volumes_per_node: '0' })),
      NodeGetCapabilities: this.unary('NodeGetCapabilities', async () => ({
        capabilities: [{ rpc: { type: 'STAGE_UNSTAGE_VOLUME' } }],
      })),
      NodeStageVolume: this.unary('NodeStageVolume', (r) => this.nodeStage(r as NodeStageRequest)),
      NodeUnstageVolume: this.unary('NodeUnstageVolume', (r) => this.nodeUnstage(r as { staging_target_path: string })),
      NodePublishVolume: this.unary('NodePublishVolume', (r) => this.nodePublish(r as NodePublishRequest)),
      NodeUnpublishVolume: this.unary('NodeUnpublishVolume', (r) => this.nodeUnpublish(r as { target_path: string })),
    });
  }

  private unary(method: string, fn: (req: unknown) => Promise<object>): grpc.handleUnaryCall<unknown, object> {
    return (call, callback) => {
      fn(call.request).then(
        (res) => callback(null, res),
        (err: unknown) => {
          const code = err instanceof CsiError ? err.code : grpc.status.INTERNAL;
          const message = err instanceof Error ? err.message : String(err);
          this.o.log(`${method} failed: ${message}`);
          callback({ code, details: message, name: 'CsiError', message }, null);
        },
      );
    };
  }

  // ---- Controller ----

  private volumePath(v: Pick<VolumeRecord, 'id' | 'block'>): string {
    return join(this.volumesDir, v.block ? `${v.id}.img` : v.id);
  }

  private snapshotPath(s: Pick<SnapshotRecord, 'id' | 'block'>): string {
    return join(this.snapshotsDir, s.block ? `${s.id}.img` : s.id);
  }

  private async readVolume(id: string): Promise<VolumeRecord> {
    try {
      return JSON.parse(await readFile(join(this.volumesDir, `${id}.json`), 'utf8')) as VolumeRecord;
    } catch {
      throw new CsiError(grpc.status.NOT_FOUND, `volume ${id} not found`);
    }
  }

  private async readSnapshot(id: string): Promise<SnapshotRecord> {
    try {
      return JSON.parse(await readFile(join(this.snapshotsDir, `${id}.json`), 'utf8')) as SnapshotRecord;
    } catch {
      throw new CsiError(grpc.status.NOT_FOUND, `snapshot ${id} not found`);
    }
  }

  private async createVolume(req: CreateVolumeRequest): Promise<object> {
    if (!req.name) throw new CsiError(grpc.status.INVALID_ARGUMENT, 'name is required');
    const id = idFor('vol', req.name);
    const block = isBlock(req.volume_capabilities);
    const capacityBytes = Number(req.capacity_range?.required_bytes ?? 0) || DEFAULT_CAPACITY;
    const existing = await this.readVolume(id).catch(() => undefined);
    if (existing) return { volume: this.volumeMessage(existing) };
    const record: VolumeRecord = { id, name: req.name, capacityBytes, block };
    const path = this.volumePath(record);
    await mkdir(this.volumesDir, { recursive: true });
    const snapshotId = req.volume_content_source?.snapshot?.snapshot_id;
    const cloneOf = req.volume_content_source?.volume?.volume_id;
    if (snapshotId) {
      const snap = await this.readSnapshot(snapshotId);
      if (snap.block !== block) throw new CsiError(grpc.status.INVALID_ARGUMENT, `snapshot ${snapshotId} has another volume mode`);
      await copyTree(this.snapshotPath(snap), path);
      record.source = { snapshotId };
    } else if (cloneOf) {
      const src = await this.readVolume(cloneOf);
      if (src.block !== block) throw new CsiError(grpc.status.INVALID_ARGUMENT, `volume ${cloneOf} has another volume mode`);
      await copyTree(this.volumePath(src), path);
      record.source = { volumeId: cloneOf };
    } else if (block) {
      await writeFile(path, '');
      await truncate(path, capacityBytes);
    } else {
      await mkdir(path, { recursive: true, mode: 0o777 });
    }
    if (block && (await stat(path)).size < capacityBytes) await truncate(path, capacityBytes);
    await writeFile(join(this.volumesDir, `${id}.json`), JSON.stringify(record));
    this.o.log(`created volume ${id} for ${req.name} (${block ? 'block' : 'filesystem'}, ${capacityBytes} bytes)`);
    return { volume: this.volumeMessage(record) };
  }

  private volumeMessage(v: VolumeRecord): object {
    const source = v.source?.snapshotId
      ? { snapshot: { snapshot_id: v.source.snapshotId } }
      : v.source?.volumeId ? { volume: { volume_id: v.source.volumeId } } : undefined;
    return { volume_id: v.id, capacity_bytes: String(v.capacityBytes), volume_context: {}, ...(source ? { content_source: source } : {}) };
  }

  private async deleteVolume(id: string): Promise<object> {
    const v = await this.readVolume(id).catch(() => undefined);
    if (!v) return {};
    await rm(this.volumePath(v), { recursive: true, force: true });
    await rm(join(this.volumesDir, `${id}.json`), { force: true });
    this.o.log(`deleted volume ${id}`);
    return {};
  }

  private async createSnapshot(req: { name: string; source_volume_id: string; parameters?: Record<string, string> }): Promise<object> {
    if (!req.name || !req.source_volume_id) throw new CsiError(grpc.status.INVALID_ARGUMENT, 'name and source_volume_id are required');
    // A test hook: a VolumeSnapshotClass with the parameter `failSnapshot: <message>` makes every snapshot of it
    // fail with that message, so the snapshot is never ready (tests of snapshot timeouts).
    const fail = req.parameters?.[FAIL_SNAPSHOT_PARAMETER];
    if (fail) throw new CsiError(grpc.status.INTERNAL, fail);
    const id = idFor('snap', req.name);
    const existing = await this.readSnapshot(id).catch(() => undefined);
    if (existing) {
      if (existing.sourceVolumeId !== req.source_volume_id) {
        throw new CsiError(grpc.status.ALREADY_EXISTS, `snapshot ${req.name} exists for another volume`);
      }
      return { snapshot: snapshotMessage(existing) };
    }
    const v = await this.readVolume(req.source_volume_id);
    await mkdir(this.snapshotsDir, { recursive: true });
    const record: SnapshotRecord = {
      id, name: req.name, sourceVolumeId: v.id, sizeBytes: v.capacityBytes, block: v.block,
      createdAtSeconds: Math.floor(Date.now() / 1000),
    };
    await copyTree(this.volumePath(v), this.snapshotPath(record));
    await writeFile(join(this.snapshotsDir, `${id}.json`), JSON.stringify(record));
    this.o.log(`created snapshot ${id} of volume ${v.id} for ${req.name}`);
    return { snapshot: snapshotMessage(record) };
  }

  private async deleteSnapshot(id: string): Promise<object> {
    const s = await this.readSnapshot(id).catch(() => undefined);
    if (!s) return {};
    await rm(this.snapshotPath(s), { recursive: true, force: true });
    await rm(join(this.snapshotsDir, `${id}.json`), { force: true });
    this.o.log(`deleted snapshot ${id}`);
    return {};
  }

  private async listSnapshots(req: { snapshot_id?: string; source_volume_id?: string }): Promise<object> {
    let records: SnapshotRecord[];
    if (req.snapshot_id) {
      const one = await this.readSnapshot(req.snapshot_id).catch(() => undefined);
      records = one ? [one] : [];
    } else {
      const { readdir } = await import('node:fs/promises');
      const names = existsSync(this.snapshotsDir) ? (await readdir(this.snapshotsDir)).filter((n) => n.endsWith('.json')) : [];
      records = await Promise.all(names.map((n) => this.readSnapshot(n.slice(0, -5))));
    }
    if (req.source_volume_id) records = records.filter((r) => r.sourceVolumeId === req.source_volume_id);
    return { entries: records.map((r) => ({ snapshot: snapshotMessage(r) })), next_token: '' };
  }

  // ---- Node ----

  private async nodeStage(req: NodeStageRequest): Promise<object> {
    const v = await this.readVolume(req.volume_id);
    const staging = req.staging_target_path;
    if (!staging) throw new CsiError(grpc.status.INVALID_ARGUMENT, 'staging_target_path is required');
    await mkdir(staging, { recursive: true });
    if (v.block) {
      // Block: the staging directory holds a device node file bound to the volume's loop device.
      const device = join(staging, 'device');
      if (await isMountPoint(device)) return {};
      const loop = await attachLoop(this.volumePath(v));
      try {
        await writeFile(device, '');
        await run('mount', ['--bind', loop, device]);
      } catch (err) {
        await run('losetup', ['-d', loop]).catch(() => undefined);
        throw err;
      }
      this.o.log(`staged block volume ${v.id} (${loop}) at ${staging}`);
      return {};
    }
    if (!(await isMountPoint(staging))) await run('mount', ['--bind', this.volumePath(v), staging]);
    this.o.log(`staged volume ${v.id} at ${staging}`);
    return {};
  }

  private async nodeUnstage(req: { staging_target_path: string; volume_id?: string }): Promise<object> {
    const staging = req.staging_target_path;
    const device = join(staging, 'device');
    if (await isMountPoint(device)) {
      const loop = await loopOfMount(device);
      await run('umount', [device]);
      if (loop) await run('losetup', ['-d', loop]).catch(() => undefined);
      await rm(device, { force: true });
    }
    while (await isMountPoint(staging)) await run('umount', [staging]);
    this.o.log(`unstaged ${staging}`);
    return {};
  }

  private async nodePublish(req: NodePublishRequest): Promise<object> {
    const v = await this.readVolume(req.volume_id);
    const target = req.target_path;
    if (!target || !req.staging_target_path) throw new CsiError(grpc.status.INVALID_ARGUMENT, 'target_path and staging_target_path are required');
    if (await isMountPoint(target)) return {};
    const source = v.block ? join(req.staging_target_path, 'device') : req.staging_target_path;
    if (v.block) {
      await mkdir(dirname(target), { recursive: true });
      if (!existsSync(target)) await writeFile(target, '');
    } else {
      await mkdir(target, { recursive: true });
    }
    await run('mount', ['--bind', source, target]);
    if (req.readonly) await run('mount', ['-o', 'remount,bind,ro', target]);
    this.o.log(`published volume ${v.id} at ${target}${req.readonly ? ' (read-only)' : ''}`);
    return {};
  }

  private async nodeUnpublish(req: { target_path: string }): Promise<object> {
    const target = req.target_path;
    while (await isMountPoint(target)) await run('umount', [target]);
    await rm(target, { recursive: true, force: true });
    this.o.log(`unpublished ${target}`);
    return {};
  }
}

interface CreateVolumeRequest {
  name: string;
  capacity_range?: { required_bytes?: string } | null;
  volume_capabilities?: VolumeCapability[];
  volume_content_source?: { snapshot?: { snapshot_id: string } | null; volume?: { volume_id: string } | null } | null;
}

interface NodeStageRequest {
  volume_id: string;
  staging_target_path: string;
}

interface NodePublishRequest {
  volume_id: string;
  staging_target_path: string;
  target_path: string;
  readonly: boolean;
}

function snapshotMessage(s: SnapshotRecord): object {
  return {
    snapshot_id: s.id,
    source_volume_id: s.sourceVolumeId,
    size_bytes: String(s.sizeBytes),
    creation_time: { seconds: String(s.createdAtSeconds), nanos: 0 },
    ready_to_use: true,
  };
}

/** Copies a volume directory or image file, keeping modes, owners, times and holes. */
async function copyTree(from: string, to: string): Promise<void> {
  await rm(to, { recursive: true, force: true });
  await run('cp', ['-a', '--sparse=always', '--reflink=auto', from, to]);
}

async function mountPoints(): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info.split('\n').map((l) => l.split(' ')[4]).filter((m): m is string => Boolean(m))
    .map((m) => m.replace(/\\([0-7]{3})/g, (_x, oct: string) => String.fromCharCode(parseInt(oct, 8))));
}

async function isMountPoint(path: string): Promise<boolean> {
  return (await mountPoints()).includes(resolve(path));
}

/**
 * A loop device of its own for one staging, never one already attached to the file: loop devices belong to the host
 * kernel, which every node of the test bed shares, so a volume unstaged on one node (detaching its loop) while staged
 * on another would leave the other node's device bound to a detached loop, or to whatever volume takes that loop
 * next. Sharing one did just that when a restored block volume moved from the data mover's pod to its workload: the
 * workload's pod could never map it (`losetup` failed on every retry). A block device's cache is written back when
 * its last user closes it, so the next staging's loop reads what the last one wrote.
 */
async function attachLoop(file: string): Promise<string> {
  const attached = await run('losetup', ['-f', '--show', file]);
  return attached.stdout.trim();
}

/** The loop device bound at `mountPoint` (its mount source in mountinfo). */
async function loopOfMount(mountPoint: string): Promise<string | undefined> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  for (const line of info.split('\n')) {
    const f = line.split(' ');
    if (f[4] !== resolve(mountPoint)) continue;
    // A bind of a device node shows devtmpfs as the source and the node's path in it as the root (`/loop3`).
    const root = f[3];
    return root && /^\/loop\d+$/.test(root) ? `/dev${root}` : undefined;
  }
  return undefined;
}
