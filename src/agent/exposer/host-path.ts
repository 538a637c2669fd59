/**
 * Where a pod volume's data lives on the node (docs/node-agent.md): the kubelet keeps it under
 * `<kubelet>/pods/<podUID>/volumes/<plugin>/<dir>`. The node-agent sees that tree at `/host_pods`; the hosting pod
 * needs the real host path, so the `/host_pods` prefix is replaced by the host directory of the node-agent's own
 * `host-pods` volume.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { V1PersistentVolume, V1Pod } from '@kubernetes/client-node';

/** Where the node-agent container mounts the kubelet's pods directory, and the name of that volume. */
export const HOST_PODS_MOUNT = '/host_pods';
export const HOST_PODS_VOLUME = 'host-pods';
const CSI_PLUGIN_DIR = 'kubernetes.io~csi';

export class HostPathError extends Error {
  override name = 'HostPathError';
}

export interface VolumeDirectoryInput {
  pod: V1Pod;
  volumeName: string;
  /** Reads a PVC's bound PV name and the PV (only called for PVC volumes). */
  getPersistentVolume: (namespace: string, claimName: string) => Promise<{ pvName: string; pv?: V1PersistentVolume | undefined }>;
}

export interface VolumeDirectory {
  /** The directory name under `volumes/<plugin>/`. */
  dir: string;
  /** Whether the data sits in a `mount` sub-directory (CSI filesystem volumes). */
  csiMount: boolean;
}

/** The volume's directory name under `volumes/<plugin>/`: the PV name for a PVC, else the volume name. */
export async function volumeDirectory(input: VolumeDirectoryInput): Promise<VolumeDirectory> {
  const volume = input.pod.spec?.volumes?.find((v) => v.name === input.volumeName);
  if (!volume) throw new HostPathError(`volume ${input.volumeName} is not in pod ${input.pod.metadata?.namespace}/${input.pod.metadata?.name}`);
  if (volume.persistentVolumeClaim) {
    const { pvName, pv } = await input.getPersistentVolume(input.pod.metadata?.namespace ?? '', volume.persistentVolumeClaim.claimName);
    if (!pvName) throw new HostPathError(`claim ${volume.persistentVolumeClaim.claimName} of volume ${input.volumeName} is not bound`);
    const block = pv?.spec?.volumeMode === 'Block';
    if (block) throw new HostPathError(`volume ${input.volumeName} is a block volume; fs-backup needs a filesystem`);
    return { dir: pvName, csiMount: Boolean(pv?.spec?.csi) };
  }
  return { dir: input.volumeName, csiMount: Boolean(volume.csi) };
}

/**
 * `<hostPodsDir>/<podUID>/volumes/<plugin>/<dir>` (+ `/mount` for CSI volumes): exactly one plugin directory must
 * hold the volume. Data of volumes under the CSI plugin directory is in `mount`, whatever the PV says.
 */
export function findVolumePath(opts: { hostPodsDir: string; podUID: string; volume: VolumeDirectory; readDir?: (p: string) => string[]; exists?: (p: string) => boolean }): string {
  const readDir = opts.readDir ?? ((p: string) => readdirSync(p));
  const exists = opts.exists ?? existsSync;
  const volumesDir = join(opts.hostPodsDir, opts.podUID, 'volumes');
  let plugins: string[];
  try {
    plugins = readDir(volumesDir);
  } catch (err) {
    throw new HostPathError(`no volumes of pod ${opts.podUID} on this node (${volumesDir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const matches = plugins.filter((plugin) => exists(join(volumesDir, plugin, opts.volume.dir))).map((plugin) => ({ plugin, path: join(volumesDir, plugin, opts.volume.dir) }));
  if (matches.length === 0) throw new HostPathError(`volume directory ${opts.volume.dir} not found under ${volumesDir}`);
  if (matches.length > 1) throw new HostPathError(`volume directory ${opts.volume.dir} found more than once under ${volumesDir}: ${matches.map((m) => m.plugin).join(', ')}`);
  const match = matches[0]!;
  return opts.volume.csiMount || match.plugin === CSI_PLUGIN_DIR ? join(match.path, 'mount') : match.path;
}

/** Maps a path seen inside the node-agent (`/host_pods/...`) to the node's real path (`/var/lib/kubelet/pods/...`). */
export function toHostPath(path: string, opts: { hostPodsDir: string; hostPodsHostDir: string }): string {
  const prefix = opts.hostPodsDir.replace(/\/+$/, '');
  if (path !== prefix && !path.startsWith(`${prefix}/`)) throw new HostPathError(`${path} is not under ${prefix}`);
  return opts.hostPodsHostDir.replace(/\/+$/, '') + path.slice(prefix.length);
}

/** The host directory of the node-agent pod's `host-pods` volume. */
export function hostPodsHostDir(nodeAgentPod: V1Pod): string {
  const v = nodeAgentPod.spec?.volumes?.find((x) => x.name === HOST_PODS_VOLUME);
  if (!v?.hostPath?.path) throw new HostPathError(`the node-agent pod has no hostPath volume named ${HOST_PODS_VOLUME}`);
  return v.hostPath.path;
}
