/**
 * Pods: the node they ran on may be gone and the scheduler picks one again, so `spec.nodeName` goes; `spec.priority`
 * is recomputed by admission from `priorityClassName`; the service-account token volume (and its mounts) that
 * the API server injected is dropped because the server injects a fresh one, named anew.
 */
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

interface Volume {
  name: string;
  secret?: { secretName?: string };
}
interface Container {
  volumeMounts?: { name: string }[];
}
interface PodSpec {
  nodeName?: string;
  priority?: number;
  serviceAccountName?: string;
  volumes?: Volume[];
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
}

function isTokenVolume(v: Volume, serviceAccount: string): boolean {
  return v.name.startsWith('kube-api-access-') || !!v.secret?.secretName?.startsWith(`${serviceAccount}-token-`);
}

export function cleanPod(item: UnstructuredObject): UnstructuredObject {
  const pod = structuredClone(item);
  const spec = (pod.spec ?? {}) as PodSpec;
  delete spec.nodeName;
  delete spec.priority;
  const sa = spec.serviceAccountName ?? 'default';
  const dropped = new Set((spec.volumes ?? []).filter((v) => isTokenVolume(v, sa)).map((v) => v.name));
  if (dropped.size) {
    spec.volumes = (spec.volumes ?? []).filter((v) => !dropped.has(v.name));
    if (spec.volumes.length === 0) delete spec.volumes;
    for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])]) {
      if (!c.volumeMounts) continue;
      c.volumeMounts = c.volumeMounts.filter((m) => !dropped.has(m.name));
      if (c.volumeMounts.length === 0) delete c.volumeMounts;
    }
  }
  pod.spec = spec;
  return pod;
}

export const podRestoreAction: RestoreItemAction = {
  name: 'velero.io/pod',
  appliesTo: () => ({ includedResources: ['pods'] }),
  execute: async (item) => ({ item: cleanPod(item) }),
};
