/**
 * The CSI snapshot objects the server reads and writes for data movement (snapshot.storage.k8s.io/v1, through the
 * generic custom-objects API: no typed client exists for them): VolumeSnapshotClasses to choose from, the source
 * VolumeSnapshot a backup creates in the PVC's namespace, its VolumeSnapshotContent (for volume info), and their
 * deletion once the data is moved. A cluster without the snapshot CRDs simply has no classes.
 */
import type { Kube } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import type { CSISnapshotInfo } from '../../api/volume-info.js';
import type { SnapshotClassLike } from './backup-decision.js';
import type { VolumeSnapshotObject } from './backup-objects.js';

const GROUP = 'snapshot.storage.k8s.io';
const VERSION = 'v1';

export interface VolumeSnapshotLike {
  metadata: { name?: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: unknown; creationTimestamp?: unknown };
  spec?: { source?: { persistentVolumeClaimName?: string }; volumeSnapshotClassName?: string };
  status?: { readyToUse?: boolean; boundVolumeSnapshotContentName?: string; restoreSize?: string | number; error?: { message?: string } };
}

interface VolumeSnapshotContentLike {
  metadata: { name?: string };
  spec?: { driver?: string };
  status?: { snapshotHandle?: string; restoreSize?: number; readyToUse?: boolean };
}

const notFoundAs = <T>(value: T) => (err: unknown) => {
  if (isNotFound(err)) return value;
  throw err;
};

export async function listSnapshotClasses(kube: Kube): Promise<SnapshotClassLike[]> {
  const res = (await kube.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshotclasses' }).catch(notFoundAs({ items: [] }))) as {
    items?: { metadata?: SnapshotClassLike['metadata']; driver?: string }[];
  };
  return (res.items ?? []).map((c) => ({ metadata: { name: c.metadata?.name ?? '', labels: c.metadata?.labels, annotations: c.metadata?.annotations }, driver: c.driver ?? '' }));
}

export async function listVolumeSnapshots(kube: Kube, namespace: string, labelSelector: string): Promise<VolumeSnapshotLike[]> {
  const res = (await kube.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshots', namespace, labelSelector }).catch(notFoundAs({ items: [] }))) as {
    items?: VolumeSnapshotLike[];
  };
  return res.items ?? [];
}

/** VolumeSnapshots in every namespace with the label selector (backup deletion finds what is left). */
export async function listVolumeSnapshotsEverywhere(kube: Kube, labelSelector: string): Promise<VolumeSnapshotLike[]> {
  const res = (await kube.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshots', labelSelector }).catch(notFoundAs({ items: [] }))) as {
    items?: VolumeSnapshotLike[];
  };
  return res.items ?? [];
}

export async function createVolumeSnapshot(kube: Kube, vs: VolumeSnapshotObject): Promise<VolumeSnapshotLike> {
  return (await kube.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshots', namespace: vs.metadata.namespace, body: vs })) as VolumeSnapshotLike;
}

export async function getVolumeSnapshot(kube: Kube, namespace: string, name: string): Promise<VolumeSnapshotLike | undefined> {
  return (await kube.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshots', namespace, name }).catch(notFoundAs(undefined))) as
    | VolumeSnapshotLike
    | undefined;
}

/** Deletes a VolumeSnapshot; false when it was already gone. */
export async function deleteVolumeSnapshot(kube: Kube, namespace: string, name: string): Promise<boolean> {
  return kube.custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshots', namespace, name }).then(() => true, notFoundAs(false));
}

/**
 * What volume info records of a source snapshot (`csiSnapshotInfo`): the storage's snapshot handle and size from its
 * VolumeSnapshotContent, the driver, the content's name and whether it was ready. Undefined when it is gone.
 */
export async function readCsiSnapshotInfo(kube: Kube, namespace: string, name: string, operationID?: string): Promise<CSISnapshotInfo | undefined> {
  const vs = await getVolumeSnapshot(kube, namespace, name);
  if (!vs) return undefined;
  const vscName = vs.status?.boundVolumeSnapshotContentName ?? '';
  const vsc = vscName
    ? ((await kube.custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: 'volumesnapshotcontents', name: vscName }).catch(notFoundAs(undefined))) as
        | VolumeSnapshotContentLike
        | undefined)
    : undefined;
  return {
    snapshotHandle: vsc?.status?.snapshotHandle ?? '',
    size: vsc?.status?.restoreSize ?? 0,
    driver: vsc?.spec?.driver ?? '',
    vscName,
    ...(operationID ? { operationID } : {}),
    ReadyToUse: vs.status?.readyToUse ?? null,
  };
}
