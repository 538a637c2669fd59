/**
 * Where the tests find a node's files on this machine, as an operator with a shell on the node would: pod volumes
 * under the kubelet's root directory, a claim's data where its storage keeps it.
 *
 * - Real nodes (the e2e tier): each node mounts its own directories of the run directory over /var/lib, /run and
 *   /var/log (tools/local-cluster/node/node-config.ts, NODE_MOUNTS), so `/var/lib/k8s/kubelet/pods/<uid>/...` inside
 *   node `n` is `<n.rootDir>/var-lib/k8s/kubelet/pods/<uid>/...` here. Any other path is the machine's own.
 * - The kubelet stand-in (the integration tier) keeps a node's files under its node root: `<rootDir>/<path>`.
 *
 * A claim's volume is bind-mounted into the pod inside the node's mount namespace, which this machine does not see;
 * its data is read where the storage keeps it: a `local` PV's path (the default StorageClass) or the CSI host-path
 * driver's directory.
 */
import { join } from 'node:path';
import { NODE_MOUNTS } from '../../tools/local-cluster/node/node-config.js';
import { clusterInfo, kubectl } from './cluster.js';
import { hostpathVolumePath, type VolumeMode } from './csi-volume.js';

type Node = ReturnType<typeof clusterInfo>['nodes'][number];

function nodeNamed(name: string | undefined): Node {
  const node = clusterInfo().nodes.find((n) => n.name === name);
  if (!node) throw new Error(`node ${name ?? '(none: pod not scheduled)'} is not one of the cluster's`);
  return node;
}

/** The path on this machine of `path` as seen inside node `nodeName`. */
export function nodeFile(nodeName: string | undefined, path: string): string {
  const node = nodeNamed(nodeName);
  if (clusterInfo().runtime !== 'containerd') return path.startsWith(`${node.rootDir}/`) ? path : join(node.rootDir, path);
  const mount = NODE_MOUNTS.find((m) => path === m.to || path.startsWith(`${m.to}/`));
  return mount ? join(node.rootDir, mount.from, path.slice(mount.to.length)) : path;
}

/** The shape of a pod these helpers need (a V1Pod or kubectl's JSON). */
export interface PodRef {
  metadata?: { uid?: string; namespace?: string; name?: string };
  spec?: { nodeName?: string; volumes?: { name: string; persistentVolumeClaim?: { claimName: string }; emptyDir?: object }[] };
}

/** Where a claim's data is on this machine: the bound PV's `local` path, or the CSI host-path driver's volume. */
export async function claimDataPath(namespace: string, claim: string): Promise<string> {
  const pvc = JSON.parse((await kubectl(['get', 'pvc', claim, '-n', namespace, '-o', 'json'])).stdout) as { spec: { volumeName?: string; volumeMode?: VolumeMode } };
  if (!pvc.spec.volumeName) throw new Error(`claim ${namespace}/${claim} is not bound`);
  const pv = JSON.parse((await kubectl(['get', 'pv', pvc.spec.volumeName, '-o', 'json'])).stdout) as {
    spec: { local?: { path: string }; hostPath?: { path: string }; csi?: { volumeHandle: string } };
  };
  if (pv.spec.local?.path ?? pv.spec.hostPath?.path) return (pv.spec.local?.path ?? pv.spec.hostPath?.path)!;
  if (pv.spec.csi) return hostpathVolumePath(clusterInfo().runDir, pv.spec.csi.volumeHandle, pvc.spec.volumeMode ?? 'Filesystem');
  throw new Error(`volume ${pvc.spec.volumeName} of claim ${namespace}/${claim} is of a kind the test bed does not provision`);
}

/**
 * The directory of a pod volume on this machine: an emptyDir under the node's kubelet root directory, a claim's data
 * where its storage keeps it.
 */
export async function podVolumeDir(pod: PodRef, volume: string): Promise<string> {
  const v = pod.spec?.volumes?.find((x) => x.name === volume);
  if (!v) throw new Error(`pod ${pod.metadata?.namespace}/${pod.metadata?.name} has no volume ${volume}`);
  if (v.persistentVolumeClaim) return claimDataPath(pod.metadata?.namespace ?? '', v.persistentVolumeClaim.claimName);
  const { kubeletRootDir } = clusterInfo();
  return nodeFile(pod.spec?.nodeName, `${kubeletRootDir}/pods/${pod.metadata?.uid ?? ''}/volumes/kubernetes.io~empty-dir/${volume}`);
}
