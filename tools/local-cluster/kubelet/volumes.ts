/**
 * Materialises a pod's volumes on the node, in the real kubelet's directory layout, and says where each one is on
 * the host. Files of secret/configMap/downwardAPI/projected volumes are written once when the pod starts
 * (no live updates). PVC volumes bind their PV's directory at `volumes/kubernetes.io~csi/<pv>/mount`.
 */
import { chmod, chown, mkdir, writeFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type {
  V1DownwardAPIVolumeFile,
  V1KeyToPath,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1Volume,
  V1VolumeProjection,
} from '@kubernetes/client-node';
import { fieldRefValue, resourceFieldValue, type NodeFacts } from './env.js';
import { hostPathOnNode, pvMountDir, volumeDir, type NodeLayout } from './layout.js';
import { bindMount, isMountPoint } from './mounts.js';
import type { CsiNodeClient } from './csi-volumes.js';

export interface TokenRequest {
  namespace: string;
  serviceAccount: string;
  audience?: string | undefined;
  expirationSeconds: number;
  podName: string;
  podUid: string;
}

/** What volume setup reads from the API server. */
export interface VolumeApi {
  secret(namespace: string, name: string): Promise<Record<string, Buffer> | undefined>;
  configMap(namespace: string, name: string): Promise<Record<string, Buffer> | undefined>;
  pvc(namespace: string, name: string): Promise<V1PersistentVolumeClaim | undefined>;
  pv(name: string): Promise<V1PersistentVolume | undefined>;
  serviceAccountToken(req: TokenRequest): Promise<string>;
}

/** A volume that cannot be set up yet (missing object, unbound claim); the pod worker retries. */
export class VolumeNotReadyError extends Error {}

export interface PreparedVolume {
  hostPath: string;
  /** secret/configMap/downwardAPI/projected are read-only in containers, as on a real node. */
  readOnly: boolean;
}

export interface PrepareVolumesOptions {
  pod: V1Pod;
  layout: NodeLayout;
  node: NodeFacts;
  api: VolumeApi;
  /** Cluster CA, used when the kube-root-ca.crt ConfigMap has not been published (yet). */
  clusterCaPem: string;
  /** Performs the CSI node calls for PVs with spec.csi (the test bed's CSI drivers). */
  csi?: CsiNodeClient | undefined;
}

export interface PreparedVolumes {
  volumes: Map<string, PreparedVolume>;
  /** Host bind mounts made for PVCs, to unmount when the pod is cleaned up. */
  hostMounts: string[];
}

export async function prepareVolumes(opts: PrepareVolumesOptions): Promise<PreparedVolumes> {
  const result: PreparedVolumes = { volumes: new Map(), hostMounts: [] };
  for (const v of opts.pod.spec?.volumes ?? []) {
    result.volumes.set(v.name, await prepareOne(v, opts, result.hostMounts));
  }
  return result;
}

const DEFAULT_MODE = 0o644;

async function prepareOne(v: V1Volume, o: PrepareVolumesOptions, hostMounts: string[]): Promise<PreparedVolume> {
  const uid = o.pod.metadata?.uid ?? '';
  const ns = o.pod.metadata?.namespace ?? 'default';
  const fsGroup = o.pod.spec?.securityContext?.fsGroup;
  if (v.emptyDir) {
    const dir = volumeDir(o.layout, uid, 'emptyDir', v.name);
    await mkdir(dir, { recursive: true });
    await chmod(dir, 0o777);
    if (fsGroup !== undefined) await chown(dir, 0, fsGroup);
    return { hostPath: dir, readOnly: false };
  }
  if (v.hostPath) {
    const path = hostPathOnNode(o.layout, v.hostPath.path);
    const type = v.hostPath.type ?? '';
    if (type === 'FileOrCreate') {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, '', { flag: 'a' });
    } else if (type === '' || type === 'DirectoryOrCreate') {
      const exists = await stat(path).catch(() => undefined);
      if (!exists) await mkdir(path, { recursive: true, mode: 0o755 });
    } else if (!(await stat(path).catch(() => undefined))) {
      throw new VolumeNotReadyError(`hostPath ${v.hostPath.path} (${path} on this node) does not exist`);
    }
    return { hostPath: path, readOnly: false };
  }
  if (v.persistentVolumeClaim) {
    const dir = await preparePvc(v.persistentVolumeClaim.claimName, ns, uid, o, hostMounts, v.persistentVolumeClaim.readOnly ?? false);
    if (fsGroup !== undefined) await chown(dir, 0, fsGroup).catch(() => undefined);
    return { hostPath: dir, readOnly: v.persistentVolumeClaim.readOnly ?? false };
  }
  if (v.ephemeral) {
    // The ephemeral-volume controller creates the claim `<pod>-<volume>`; from here it is an ordinary PVC.
    const dir = await preparePvc(`${o.pod.metadata?.name ?? ''}-${v.name}`, ns, uid, o, hostMounts);
    if (fsGroup !== undefined) await chown(dir, 0, fsGroup).catch(() => undefined);
    return { hostPath: dir, readOnly: false };
  }
  if (v.secret) {
    const dir = volumeDir(o.layout, uid, 'secret', v.name);
    const data = await o.api.secret(ns, v.secret.secretName ?? '');
    if (!data && !v.secret.optional) throw new VolumeNotReadyError(`secret "${v.secret.secretName ?? ''}" not found`);
    await writeKeyed(filesIn(dir, v.secret.defaultMode, fsGroup), data ?? {}, v.secret.items);
    return { hostPath: dir, readOnly: true };
  }
  if (v.configMap) {
    const dir = volumeDir(o.layout, uid, 'configMap', v.name);
    const data = await o.api.configMap(ns, v.configMap.name ?? '');
    if (!data && !v.configMap.optional) throw new VolumeNotReadyError(`configmap "${v.configMap.name ?? ''}" not found`);
    await writeKeyed(filesIn(dir, v.configMap.defaultMode, fsGroup), data ?? {}, v.configMap.items);
    return { hostPath: dir, readOnly: true };
  }
  if (v.downwardAPI) {
    const dir = volumeDir(o.layout, uid, 'downwardAPI', v.name);
    await mkdir(dir, { recursive: true });
    await writeDownward(filesIn(dir, v.downwardAPI.defaultMode, undefined), v.downwardAPI.items ?? [], o);
    return { hostPath: dir, readOnly: true };
  }
  if (v.projected) {
    const dir = volumeDir(o.layout, uid, 'projected', v.name);
    await mkdir(dir, { recursive: true });
    const files = filesIn(dir, v.projected.defaultMode, fsGroup);
    for (const source of v.projected.sources ?? []) await writeProjection(files, source, o);
    return { hostPath: dir, readOnly: true };
  }
  throw new VolumeNotReadyError(`volume "${v.name}": this volume type is not supported by the local kubelet`);
}

async function preparePvc(
  claim: string, ns: string, podUid: string, o: PrepareVolumesOptions, hostMounts: string[], readOnly = false,
): Promise<string> {
  const pvc = await o.api.pvc(ns, claim);
  if (!pvc) throw new VolumeNotReadyError(`persistentvolumeclaim "${claim}" not found`);
  const pvName = pvc.spec?.volumeName;
  if (!pvName || pvc.status?.phase !== 'Bound') throw new VolumeNotReadyError(`persistentvolumeclaim "${claim}" is not bound`);
  const pv = await o.api.pv(pvName);
  if (!pv) throw new VolumeNotReadyError(`persistentvolume "${pvName}" not found`);
  if (pv.spec?.csi) {
    // A CSI driver's volume: the driver stages and publishes it; the pod cleanup unpublishes it.
    if (!o.csi) throw new VolumeNotReadyError(`persistentvolume "${pvName}" is a CSI volume and this kubelet has no CSI support`);
    return o.csi.publish({ pv, podUid, readOnly });
  }
  const source = pvSourceOnNode(pv, o.layout);
  await mkdir(source, { recursive: true });
  const target = pvMountDir(o.layout, podUid, pvName);
  await mkdir(target, { recursive: true });
  if (!(await isMountPoint(target))) await bindMount(source, target);
  hostMounts.push(target);
  return target;
}

/**
 * A PV's directory on this node, by the hostPath rule: the provisioner's paths are already under the node root
 * and stay as they are; any other path is re-rooted under the node root, or shared if under the run directory.
 */
export function pvSourceOnNode(pv: V1PersistentVolume, layout: NodeLayout): string {
  const path = pv.spec?.local?.path ?? pv.spec?.hostPath?.path;
  if (!path) throw new VolumeNotReadyError(`persistentvolume "${pv.metadata?.name ?? ''}" is neither local nor hostPath`);
  return hostPathOnNode(layout, path);
}

/** Where a volume's files go and their defaults. */
interface VolumeFiles {
  dir: string;
  mode: number;
  fsGroup?: number | undefined;
}

function filesIn(dir: string, defaultMode: number | undefined, fsGroup: number | undefined): VolumeFiles {
  return { dir, mode: defaultMode ?? DEFAULT_MODE, fsGroup };
}

async function writeFileAt(t: VolumeFiles, file: { path: string; content: Buffer | string; mode?: number | undefined }): Promise<void> {
  const target = resolve(t.dir, file.path);
  if (!target.startsWith(resolve(t.dir) + '/')) throw new VolumeNotReadyError(`item path "${file.path}" escapes the volume`);
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, file.content);
  await chmod(target, file.mode ?? t.mode);
  if (t.fsGroup !== undefined) await chown(target, 0, t.fsGroup);
}

/** Secret/ConfigMap data: every key as a file, or only the listed items at their paths. */
async function writeKeyed(t: VolumeFiles, data: Record<string, Buffer>, items: V1KeyToPath[] | undefined): Promise<void> {
  await mkdir(t.dir, { recursive: true });
  if (!items || items.length === 0) {
    for (const [key, value] of Object.entries(data)) await writeFileAt(t, { path: key, content: value });
    return;
  }
  for (const item of items) {
    const value = data[item.key];
    if (value === undefined) continue;
    await writeFileAt(t, { path: item.path, content: value, mode: item.mode });
  }
}

async function writeDownward(t: VolumeFiles, items: V1DownwardAPIVolumeFile[], o: PrepareVolumesOptions): Promise<void> {
  for (const item of items) {
    let value = '';
    if (item.fieldRef) value = fieldRefValue(o.pod, item.fieldRef.fieldPath, o.node);
    else if (item.resourceFieldRef) {
      const name = item.resourceFieldRef.containerName;
      const c = o.pod.spec?.containers.find((x) => x.name === name) ?? o.pod.spec?.containers[0];
      const divisor = item.resourceFieldRef.divisor;
      if (c) value = resourceFieldValue(c, item.resourceFieldRef.resource, divisor === undefined ? undefined : String(divisor), o.node);
    }
    await writeFileAt(t, { path: item.path, content: value, mode: item.mode });
  }
}

async function writeProjection(t: VolumeFiles, source: V1VolumeProjection, o: PrepareVolumesOptions): Promise<void> {
  const ns = o.pod.metadata?.namespace ?? 'default';
  if (source.serviceAccountToken) {
    const sat = source.serviceAccountToken;
    const token = await o.api.serviceAccountToken({
      namespace: ns,
      serviceAccount: o.pod.spec?.serviceAccountName ?? 'default',
      audience: sat.audience,
      expirationSeconds: sat.expirationSeconds ?? 3607,
      podName: o.pod.metadata?.name ?? '',
      podUid: o.pod.metadata?.uid ?? '',
    });
    await writeFileAt(t, { path: sat.path, content: token });
    // A pod running as non-root owns its token file, so it can read it whatever the mode (as the real kubelet does).
    const uid = o.pod.spec?.securityContext?.runAsUser;
    if (uid !== undefined) await chown(join(t.dir, sat.path), uid, t.fsGroup ?? o.pod.spec?.securityContext?.runAsGroup ?? 0);
  } else if (source.configMap) {
    let data = await o.api.configMap(ns, source.configMap.name ?? '');
    if (!data && source.configMap.name === 'kube-root-ca.crt') data = { 'ca.crt': Buffer.from(o.clusterCaPem) };
    if (!data && !source.configMap.optional) throw new VolumeNotReadyError(`configmap "${source.configMap.name ?? ''}" not found`);
    await writeKeyed(t, data ?? {}, source.configMap.items);
  } else if (source.secret) {
    const data = await o.api.secret(ns, source.secret.name ?? '');
    if (!data && !source.secret.optional) throw new VolumeNotReadyError(`secret "${source.secret.name ?? ''}" not found`);
    await writeKeyed(t, data ?? {}, source.secret.items);
  } else if (source.downwardAPI) {
    await writeDownward(t, source.downwardAPI.items ?? [], o);
  }
}
