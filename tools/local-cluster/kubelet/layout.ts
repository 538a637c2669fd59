/**
 * Where things live on a simulated node. The pod and volume paths mirror the real kubelet's layout exactly because
 * fs-backup finds volume data by it (`<root>/var/lib/kubelet/pods/<uid>/volumes/<plugin-dir>/<volume>`).
 */
import { basename, dirname, join, resolve, isAbsolute } from 'node:path';

/** Plugin directory names the real kubelet uses under `volumes/`. */
export const VOLUME_PLUGIN_DIRS = {
  emptyDir: 'kubernetes.io~empty-dir',
  secret: 'kubernetes.io~secret',
  configMap: 'kubernetes.io~configmap',
  projected: 'kubernetes.io~projected',
  downwardAPI: 'kubernetes.io~downward-api',
  csi: 'kubernetes.io~csi',
} as const;
export type VolumePluginKind = keyof typeof VOLUME_PLUGIN_DIRS;

export interface NodeLayout {
  rootDir: string;
  /**
   * Host paths under this directory are the same on every node (like network storage mounted everywhere): the
   * cluster's run directory, when the node root is `<run-dir>/nodes/<node>`.
   */
  sharedDir?: string | undefined;
}

/** The run directory when the node root follows `<run-dir>/nodes/<node>`, else undefined. */
export function sharedDirFor(rootDir: string): string | undefined {
  const parent = dirname(resolve(rootDir));
  return basename(parent) === 'nodes' ? dirname(parent) : undefined;
}

function isInside(path: string, dir: string): boolean {
  const d = resolve(dir);
  return path === d || path.startsWith(d + '/');
}

/** `<root>/var/lib/kubelet`: self-bind-mounted rshared so host-side mounts reach containers (HostToContainer). */
export function kubeletDir(l: NodeLayout): string {
  return join(l.rootDir, 'var/lib/kubelet');
}

export function podsDir(l: NodeLayout): string {
  return join(kubeletDir(l), 'pods');
}

export function podDir(l: NodeLayout, podUid: string): string {
  return join(podsDir(l), podUid);
}

export function volumeDir(l: NodeLayout, podUid: string, kind: VolumePluginKind, volumeName: string): string {
  return join(podDir(l, podUid), 'volumes', VOLUME_PLUGIN_DIRS[kind], volumeName);
}

/** A PVC-backed volume: the bound PV's directory is bind-mounted here, named by the PV as the CSI plugin does. */
export function pvMountDir(l: NodeLayout, podUid: string, pvName: string): string {
  return join(podDir(l, podUid), 'volumes', VOLUME_PLUGIN_DIRS.csi, pvName, 'mount');
}

/** The per-run termination-message file, bind-mounted at the container's terminationMessagePath. */
export function terminationLogFile(l: NodeLayout, podUid: string, container: string, restartCount: number): string {
  return join(podDir(l, podUid), 'containers', container, String(restartCount));
}

/** Our own bookkeeping (launch script, pid/exit records) for one container run; not part of the real layout. */
export function runtimeDir(l: NodeLayout, podUid: string, container: string): string {
  return join(podDir(l, podUid), 'cairn-runtime', container);
}

export function podLogDir(l: NodeLayout, pod: { namespace: string; name: string; uid: string }): string {
  return join(l.rootDir, 'var/log/pods', `${pod.namespace}_${pod.name}_${pod.uid}`);
}

export function containerLogFile(
  l: NodeLayout,
  pod: { namespace: string; name: string; uid: string },
  container: string,
  restartCount: number,
): string {
  return join(podLogDir(l, pod), container, `${restartCount}.log`);
}

/** `<root>/pids/<pod-uid>_<container>` holds the pid of the container's process group (read by cluster:down). */
export function pidsDir(l: NodeLayout): string {
  return join(l.rootDir, 'pids');
}

export function pidFile(l: NodeLayout, podUid: string, container: string): string {
  return join(pidsDir(l), `${podUid}_${container}`);
}

/**
 * A hostPath volume's path on this node: a hostPath is re-rooted under the node root, so `/var/lib/kubelet/pods`
 * becomes this node's pod directory and nodes never share host paths; except paths already under the node root,
 * and paths under the shared (run) directory, which every node sees alike.
 */
export function hostPathOnNode(l: NodeLayout, path: string): string {
  if (!isAbsolute(path)) throw new Error(`hostPath must be absolute: ${path}`);
  const abs = resolve('/', path);
  if (isInside(abs, l.rootDir) || (l.sharedDir && isInside(abs, l.sharedDir))) return abs;
  return join(l.rootDir, abs.slice(1));
}
