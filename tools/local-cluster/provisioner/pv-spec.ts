/**
 * The provisioner's objects and naming rules, pure so they can be tested without a cluster.
 *
 * Path rule: a claim's data lives on the node it was provisioned for, at `<node-root>/pv/<pv-name>`, where
 * `<node-root>` is the Node's `cairn.local/root-dir` annotation (written by the local kubelet) and defaults to
 * `<run-dir>/nodes/<node-name>`. The PV is a `local` PV with that path and node affinity to that node; the kubelet
 * bind-mounts that directory at `volumes/kubernetes.io~csi/<pv-name>/mount` in the pod's directory.
 */
import { join } from 'node:path';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';

export const PROVISIONER_NAME = 'cairn.local/local-path';
export const STORAGE_CLASS_NAME = 'local-path';
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
export const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';
export const PROVISIONED_BY_ANNOTATION = 'pv.kubernetes.io/provisioned-by';
export const NODE_ROOT_ANNOTATION = 'cairn.local/root-dir';

export function defaultStorageClass(): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: STORAGE_CLASS_NAME, annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
    provisioner: PROVISIONER_NAME,
    volumeBindingMode: 'WaitForFirstConsumer',
    reclaimPolicy: 'Delete',
    allowVolumeExpansion: true,
  };
}

/** Same naming as external provisioners: `pvc-<claim uid>`. */
export function pvNameFor(pvc: V1PersistentVolumeClaim): string {
  return `pvc-${pvc.metadata?.uid ?? ''}`;
}

export function nodeRoot(o: { runDir: string; nodeName: string; rootAnnotation?: string | undefined }): string {
  return o.rootAnnotation || join(o.runDir, 'nodes', o.nodeName);
}

export function pvPath(nodeRootDir: string, pvName: string): string {
  return join(nodeRootDir, 'pv', pvName);
}

export interface BuildPvOptions {
  pvc: V1PersistentVolumeClaim;
  storageClass: V1StorageClass;
  nodeName: string;
  path: string;
}

export function buildPv(o: BuildPvOptions): V1PersistentVolume {
  const meta = o.pvc.metadata ?? {};
  const storage = o.pvc.spec?.resources?.requests?.storage ?? '1Gi';
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: pvNameFor(o.pvc),
      annotations: { [PROVISIONED_BY_ANNOTATION]: PROVISIONER_NAME, [SELECTED_NODE_ANNOTATION]: o.nodeName },
    },
    spec: {
      capacity: { storage: String(storage) },
      accessModes: o.pvc.spec?.accessModes?.length ? o.pvc.spec.accessModes : ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: o.storageClass.reclaimPolicy ?? 'Delete',
      storageClassName: o.storageClass.metadata?.name ?? STORAGE_CLASS_NAME,
      volumeMode: o.pvc.spec?.volumeMode ?? 'Filesystem',
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: meta.namespace,
        name: meta.name,
        uid: meta.uid,
        ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
      },
      local: { path: o.path },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [o.nodeName] }] }],
        },
      },
    },
  };
}

/** Whether a claim is ours to provision now, and on which node (undefined: not yet / not ours). */
export function provisionTarget(o: {
  pvc: V1PersistentVolumeClaim;
  storageClass: V1StorageClass | undefined;
  fallbackNode: string | undefined;
}): string | undefined {
  const { pvc, storageClass } = o;
  if (!storageClass || storageClass.provisioner !== PROVISIONER_NAME) return undefined;
  if (pvc.spec?.volumeName || pvc.status?.phase === 'Bound' || pvc.metadata?.deletionTimestamp) return undefined;
  const selected = pvc.metadata?.annotations?.[SELECTED_NODE_ANNOTATION];
  if (selected) return selected;
  return storageClass.volumeBindingMode === 'Immediate' ? o.fallbackNode : undefined;
}
