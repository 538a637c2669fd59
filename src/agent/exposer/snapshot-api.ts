/**
 * snapshot.storage.k8s.io/v1 through CustomObjectsApi: reads are validated into the views of snapshot-objects.ts,
 * a missing object reads as undefined, a create of an existing object reports `exists` (the caller decides whether
 * it is its own), a delete of a missing one is not an error.
 */
import type { Kube } from '../../kube/client.js';
import { call } from '../../kube/client.js';
import { isAlreadyExists, isNotFound, undefinedIfNotFound } from '../../kube/errors.js';
import {
  SNAPSHOT_GROUP,
  SNAPSHOT_VERSION,
  parseVolumeSnapshot,
  parseVolumeSnapshotContent,
  type VolumeSnapshotContentManifest,
  type VolumeSnapshotContentView,
  type VolumeSnapshotManifest,
  type VolumeSnapshotView,
} from './snapshot-objects.js';

const SNAPSHOTS = { group: SNAPSHOT_GROUP, version: SNAPSHOT_VERSION, plural: 'volumesnapshots' };
const CONTENTS = { group: SNAPSHOT_GROUP, version: SNAPSHOT_VERSION, plural: 'volumesnapshotcontents' };

export type CreateResult = 'created' | 'exists';

export interface SnapshotApi {
  getSnapshot(namespace: string, name: string): Promise<VolumeSnapshotView | undefined>;
  getContent(name: string): Promise<VolumeSnapshotContentView | undefined>;
  createSnapshot(body: VolumeSnapshotManifest): Promise<CreateResult>;
  createContent(body: VolumeSnapshotContentManifest): Promise<CreateResult>;
  deleteSnapshot(namespace: string, name: string): Promise<void>;
  deleteContent(name: string): Promise<void>;
}

async function created(fn: () => Promise<unknown>): Promise<CreateResult> {
  try {
    await fn();
    return 'created';
  } catch (err) {
    if (isAlreadyExists(err)) return 'exists';
    throw err;
  }
}

async function deleted(fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

export function snapshotApi(kube: Kube): SnapshotApi {
  const c = kube.custom;
  return {
    getSnapshot: (namespace, name) =>
      call(kube, `get VolumeSnapshot ${namespace}/${name}`, async () => {
        const raw = await undefinedIfNotFound(() => c.getNamespacedCustomObject({ ...SNAPSHOTS, namespace, name }));
        return raw === undefined ? undefined : parseVolumeSnapshot(raw);
      }),
    getContent: (name) =>
      call(kube, `get VolumeSnapshotContent ${name}`, async () => {
        const raw = await undefinedIfNotFound(() => c.getClusterCustomObject({ ...CONTENTS, name }));
        return raw === undefined ? undefined : parseVolumeSnapshotContent(raw);
      }),
    createSnapshot: (body) =>
      call(kube, `create VolumeSnapshot ${body.metadata.namespace}/${body.metadata.name}`, () =>
        created(() => c.createNamespacedCustomObject({ ...SNAPSHOTS, namespace: body.metadata.namespace, body })),
      ),
    createContent: (body) => call(kube, `create VolumeSnapshotContent ${body.metadata.name}`, () => created(() => c.createClusterCustomObject({ ...CONTENTS, body }))),
    deleteSnapshot: (namespace, name) =>
      call(kube, `delete VolumeSnapshot ${namespace}/${name}`, () => deleted(() => c.deleteNamespacedCustomObject({ ...SNAPSHOTS, namespace, name }))),
    deleteContent: (name) => call(kube, `delete VolumeSnapshotContent ${name}`, () => deleted(() => c.deleteClusterCustomObject({ ...CONTENTS, name }))),
  };
}
