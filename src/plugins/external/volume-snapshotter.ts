/**
 * The VolumeSnapshotter service of a plugin (Velero's native volume snapshots: a cloud's disk snapshots). cairn's
 * backups do not take native snapshots (fs-backup and CSI snapshots move volume data), so nothing in a backup calls
 * this yet; the client is here so such plugins load, list and can be driven, e.g. by `plugin` checks and tests.
 */
import type { PluginIdentifier } from './kinds.js';
import type { CreateSnapshotResponse, CreateVolumeResponse, Empty, GetVolumeIDResponse, GetVolumeInfoResponse, SetVolumeIDResponse } from './messages.js';
import { unary } from './rpc.js';
import type { PluginSession } from './session.js';

export class VolumeSnapshotterPluginClient {
  constructor(
    private readonly session: PluginSession,
    readonly id: PluginIdentifier,
  ) {}

  private async call<Res>(method: string, req: object): Promise<Res> {
    return unary<Res>(await this.session.target(this.id, 'VolumeSnapshotter'), method, { plugin: this.id.name, ...req });
  }

  /** Init, remembered for a restarted process. */
  async init(config: Readonly<Record<string, string>>): Promise<void> {
    const request = { plugin: this.id.name, config: { ...config } };
    await this.call<Empty>('Init', request);
    this.session.process(this.id.command).addReinitializer(`VolumeSnapshotter/${this.id.name}`, (proc) =>
      unary<Empty>({ proc, service: 'VolumeSnapshotter', plugin: this.id.name, timeoutMs: this.session.callTimeoutMs }, 'Init', request).then(() => undefined),
    );
  }

  async createVolumeFromSnapshot(snapshotID: string, volumeType: string, volumeAZ: string, iops?: number): Promise<string> {
    return (await this.call<CreateVolumeResponse>('CreateVolumeFromSnapshot', { snapshotID, volumeType, volumeAZ, iops: String(iops ?? 0) })).volumeID;
  }

  async getVolumeInfo(volumeID: string, volumeAZ: string): Promise<{ volumeType: string; iops?: number }> {
    const res = await this.call<GetVolumeInfoResponse>('GetVolumeInfo', { volumeID, volumeAZ });
    return { volumeType: res.volumeType, ...(Number(res.iops) ? { iops: Number(res.iops) } : {}) };
  }

  async createSnapshot(volumeID: string, volumeAZ: string, tags: Readonly<Record<string, string>>): Promise<string> {
    return (await this.call<CreateSnapshotResponse>('CreateSnapshot', { volumeID, volumeAZ, tags: { ...tags } })).snapshotID;
  }

  async deleteSnapshot(snapshotID: string): Promise<void> {
    await this.call<Empty>('DeleteSnapshot', { snapshotID });
  }

  /** The volume ID the plugin reads from a PersistentVolume ("" when it is not one of its volumes). */
  async getVolumeID(persistentVolume: object): Promise<string> {
    return (await this.call<GetVolumeIDResponse>('GetVolumeID', { persistentVolume: Buffer.from(JSON.stringify(persistentVolume)) })).volumeID;
  }

  async setVolumeID(persistentVolume: object, volumeID: string): Promise<object> {
    const res = await this.call<SetVolumeIDResponse>('SetVolumeID', { persistentVolume: Buffer.from(JSON.stringify(persistentVolume)), volumeID });
    return JSON.parse(res.persistentVolume.toString('utf8')) as object;
  }
}
