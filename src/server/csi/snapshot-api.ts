/**
 * The server's reads and writes of CSI snapshot objects (snapshot.storage.k8s.io/v1, through the generic
 * custom-objects API: no typed client exists for them) for snapshots a backup keeps: the VolumeSnapshots of a
 * backup, their contents and classes, the content's deletion policy, and deletion. A cluster without the snapshot
 * CRDs has none of them.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Kube } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import type { VolumeSnapshot, VolumeSnapshotClass, VolumeSnapshotContent } from './snapshot-objects.js';

const GROUP = 'snapshot.storage.k8s.io';
const VERSION = 'v1';

/** The request option that makes the custom-objects client send a JSON merge patch. */
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const notFoundAs = <T>(value: T) => (err: unknown) => {
  if (isNotFound(err)) return value;
  throw err;
};

/** VolumeSnapshots in every namespace with a label selector. */
export async function listVolumeSnapshotsWith(kube: Kube, labelSelector: string): Promise<VolumeSnapshot[]> {
  const res = (await kube.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshots', labelSelector }).catch(notFoundAs({ items: [] }))) as {
    items?: VolumeSnapshot[];
  };
  return res.items ?? [];
}

export async function readVolumeSnapshot(kube: Kube, namespace: string, name: string): Promise<VolumeSnapshot | undefined> {
  return (await kube.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshots', namespace, name }).catch(notFoundAs(undefined))) as
    | VolumeSnapshot
    | undefined;
}

export async function readVolumeSnapshotContent(kube: Kube, name: string): Promise<VolumeSnapshotContent | undefined> {
  if (!name) return undefined;
  return (await kube.custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshotcontents', name }).catch(notFoundAs(undefined))) as
    | VolumeSnapshotContent
    | undefined;
}

export async function readVolumeSnapshotClass(kube: Kube, name: string): Promise<VolumeSnapshotClass | undefined> {
  if (!name) return undefined;
  return (await kube.custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshotclasses', name }).catch(notFoundAs(undefined))) as
    | VolumeSnapshotClass
    | undefined;
}

/** Sets a content's deletion policy (a merge patch); false when the content is gone. */
export async function setContentDeletionPolicy(kube: Kube, name: string, policy: 'Delete' | 'Retain'): Promise<boolean> {
  return kube.custom
    .patchClusterCustomObject(
      { group: GROUP, version: VERSION, plural: 'volumesnapshotcontents', name, body: { spec: { deletionPolicy: policy } } },
      mergePatch,
    )
    .then(() => true, notFoundAs(false));
}

/** Adds labels to a content (a merge patch); false when the content is gone. */
export async function labelContent(kube: Kube, name: string, labels: Record<string, string>): Promise<boolean> {
  return kube.custom
    .patchClusterCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshotcontents', name, body: { metadata: { labels } } }, mergePatch)
    .then(() => true, notFoundAs(false));
}

export async function createVolumeSnapshotContent(kube: Kube, body: VolumeSnapshotContent): Promise<VolumeSnapshotContent> {
  return (await kube.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshotcontents', body })) as VolumeSnapshotContent;
}

export async function createVolumeSnapshotObject(kube: Kube, body: VolumeSnapshot): Promise<VolumeSnapshot> {
  return (await kube.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshots', namespace: body.metadata.namespace ?? '', body })) as VolumeSnapshot;
}

/** Deletes a VolumeSnapshot; false when it was already gone. */
export async function deleteVolumeSnapshotNamed(kube: Kube, namespace: string, name: string): Promise<boolean> {
  return kube.custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshots', namespace, name }).then(() => true, notFoundAs(false));
}

/** Deletes a VolumeSnapshotContent; false when it was already gone. */
export async function deleteVolumeSnapshotContent(kube: Kube, name: string): Promise<boolean> {
  return kube.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshotcontents', name }).then(() => true, notFoundAs(false));
}
