/**
 * Creating and deleting the core objects an expose makes in the install namespace (the data-mover pod, the PVC it
 * uses), idempotently: an AlreadyExists of an object owned by the same CR counts as created, one owned by anything
 * else is an error; deleting a missing object is not.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../base/logger.js';
import { call, type Kube } from '../../kube/client.js';
import type { NodeAgentConfig } from '../config.js';
import { isAlreadyExists, undefinedIfNotFound } from '../../kube/errors.js';
import { isOwnedBy, type ExposeOwner } from './snapshot-objects.js';

/** What every exposer (pod volume, CSI snapshot, generic restore) is made with: the node agent's own context. */
export interface ExposerOptions {
  kube: Kube;
  /** The install namespace (where the exposed objects live). */
  namespace: string;
  /** This node: the one that claimed the CR, where its pod must run. */
  nodeName: string;
  nodeAgentPod: V1Pod;
  config: NodeAgentConfig;
  resourceTimeoutMs: number;
  logLevel: string;
  logger: Logger;
}

export const readPod = (kube: Kube, namespace: string, name: string): Promise<V1Pod | undefined> =>
  call(kube, `get pod ${namespace}/${name}`, () => undefinedIfNotFound(() => kube.core.readNamespacedPod({ namespace, name })));

export const readPvc = (kube: Kube, namespace: string, name: string): Promise<V1PersistentVolumeClaim | undefined> =>
  call(kube, `get PVC ${namespace}/${name}`, () => undefinedIfNotFound(() => kube.core.readNamespacedPersistentVolumeClaim({ namespace, name })));

/** A StorageClass's `volumeBindingMode` (undefined when the class does not exist or does not say). */
export async function readBindingMode(kube: Kube, storageClass: string): Promise<string | undefined> {
  const sc = await call(kube, `get StorageClass ${storageClass}`, () =>
    undefinedIfNotFound(() => kube.custom.getClusterCustomObject({ group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', name: storageClass })),
  );
  const mode = (sc as { volumeBindingMode?: unknown } | undefined)?.volumeBindingMode;
  return typeof mode === 'string' ? mode : undefined;
}

/** Creates `body` unless this owner's object of that name exists; returns the object now in place. */
async function ensure<T extends { metadata?: { name?: string; namespace?: string } | undefined }>(opts: {
  what: string;
  owner: ExposeOwner;
  body: T;
  create: () => Promise<T>;
  read: () => Promise<T | undefined>;
}): Promise<T> {
  try {
    return await opts.create();
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const existing = await opts.read();
    if (!existing || !isOwnedBy(existing.metadata, opts.owner)) {
      throw new Error(`${opts.what} ${opts.body.metadata?.namespace ?? ''}/${opts.body.metadata?.name ?? ''} already exists and is not owned by ${opts.owner.kind} ${opts.owner.name}`, { cause: err });
    }
    return existing;
  }
}

export function ensurePod(kube: Kube, owner: ExposeOwner, body: V1Pod): Promise<V1Pod> {
  const namespace = body.metadata?.namespace ?? '';
  const name = body.metadata?.name ?? '';
  return ensure({ what: 'pod', owner, body, create: () => kube.core.createNamespacedPod({ namespace, body }), read: () => readPod(kube, namespace, name) });
}

export function ensurePvc(kube: Kube, owner: ExposeOwner, body: V1PersistentVolumeClaim): Promise<V1PersistentVolumeClaim> {
  const namespace = body.metadata?.namespace ?? '';
  const name = body.metadata?.name ?? '';
  return ensure({ what: 'PVC', owner, body, create: () => kube.core.createNamespacedPersistentVolumeClaim({ namespace, body }), read: () => readPvc(kube, namespace, name) });
}

/** Deletes the pod (at once: it holds nothing worth a grace period) if it exists and is this owner's. */
export async function deleteOwnedPod(kube: Kube, owner: ExposeOwner): Promise<void> {
  const pod = await readPod(kube, owner.namespace, owner.name);
  if (!pod || !isOwnedBy(pod.metadata, owner) || pod.metadata?.deletionTimestamp) return;
  await call(kube, `delete pod ${owner.namespace}/${owner.name}`, () =>
    undefinedIfNotFound(() => kube.core.deleteNamespacedPod({ namespace: owner.namespace, name: owner.name, gracePeriodSeconds: 0 })),
  );
}

export async function deleteOwnedPvc(kube: Kube, owner: ExposeOwner): Promise<void> {
  const pvc = await readPvc(kube, owner.namespace, owner.name);
  if (!pvc || !isOwnedBy(pvc.metadata, owner) || pvc.metadata?.deletionTimestamp) return;
  await call(kube, `delete PVC ${owner.namespace}/${owner.name}`, () => undefinedIfNotFound(() => kube.core.deleteNamespacedPersistentVolumeClaim({ namespace: owner.namespace, name: owner.name })));
}

/** What an exposer made for its owner: the data mover's pod first (it uses the claim), then the claim. */
export async function deleteOwnedPodAndPvc(kube: Kube, owner: ExposeOwner): Promise<void> {
  await deleteOwnedPod(kube, owner);
  await deleteOwnedPvc(kube, owner);
}
