/**
 * Restoring volumes from kept CSI snapshots, as Velero's CSI restore actions do:
 *   - a claim whose backed-up object names its VolumeSnapshot (annotation `velero.io/volume-snapshot-name`) is
 *     created with `spec.dataSource` pointing at a VolumeSnapshot made for this restore, and without its old
 *     volume, so the CSI driver provisions a new volume from the snapshot;
 *   - that VolumeSnapshot is the backed-up one renamed to sha256(`<restore UID>/<backed-up name>`), its source the
 *     VolumeSnapshotContent of the same name;
 *   - the content is the backed-up one statically bound to the storage's snapshot handle (`spec.source
 *     .snapshotHandle`), with deletion policy Retain, so deleting the restored objects never deletes the backup's
 *     snapshot;
 *   - VolumeSnapshotClasses come back as they were.
 * With `restorePVs: false` none of the snapshot objects is restored and claims get no data source.
 */
import { createHash } from 'node:crypto';
import { Annotations, Labels, type Restore } from '../../api/index.js';
import type { RestoreItemAction, RestoreItemResult, UnstructuredObject } from '../../plugins/item-actions/types.js';

const GROUP = 'snapshot.storage.k8s.io';
const VOLUME_SNAPSHOTS = `volumesnapshots.${GROUP}`;
const VOLUME_SNAPSHOT_CONTENTS = `volumesnapshotcontents.${GROUP}`;
const VOLUME_SNAPSHOT_CLASSES = `volumesnapshotclasses.${GROUP}`;
/** The annotations naming a content's snapshotter secret and a class's list secret (the keys Velero reads). */
const DELETION_SECRET = { name: 'csi.storage.k8s.io/snapshotter-secret-name', namespace: 'csi.storage.k8s.io/snapshotter-secret-namespace' };
const LIST_SECRET = { name: 'csi.storage.k8s.io/snapshotter-list-secret-name', namespace: 'csi.storage.k8s.io/snapshotter-list-secret-namespace' };

/** Velero's name for a restored VolumeSnapshot and its content: hex sha256 of `<restore UID>/<backed-up VolumeSnapshot>`. */
export function restoredSnapshotName(restoreUid: string, volumeSnapshotName: string): string {
  return createHash('sha256').update(`${restoreUid}/${volumeSnapshotName}`).digest('hex');
}

const restoresVolumes = (restore: Restore) => restore.spec.restorePVs !== false;

/**
 * The restore action of one CSI snapshot resource (`what` names it in the skip reason): a restore that restores no
 * volumes skips the item, any other runs `restoreItem`.
 */
function snapshotObjectRestoreAction(name: string, resource: string, what: string, restoreItem: RestoreItemAction['execute']): RestoreItemAction {
  return {
    name,
    pluginKind: 'RestoreItemActionV2',
    appliesTo: () => ({ includedResources: [resource] }),
    async execute(item, ctx) {
      if (!restoresVolumes(ctx.restore)) return { item, skip: { reason: `the restore does not restore volumes (restorePVs is false), so ${what} is not restored` } };
      return restoreItem(item, ctx);
    },
  };
}

/** The item restored with the secret its annotations name (`keys`) as an additional item, when they name one. */
function withSecretOf(item: UnstructuredObject, keys: { name: string; namespace: string }): RestoreItemResult {
  const name = item.metadata.annotations?.[keys.name];
  const namespace = item.metadata.annotations?.[keys.namespace];
  return { item, ...(name && namespace ? { additionalItems: [{ groupResource: 'secrets', namespace, name }] } : {}) };
}

interface ClaimSpec {
  volumeName?: string;
  dataSource?: { apiGroup?: string; kind: string; name: string } | null;
  dataSourceRef?: unknown;
}

/** The claim's part: a claim restored from its kept CSI snapshot. Returns undefined for any other claim. */
export function restoreClaimFromSnapshot(item: UnstructuredObject, fromBackup: UnstructuredObject, restore: Restore): RestoreItemResult | undefined {
  const vsName = fromBackup.metadata.annotations?.[Labels.VolumeSnapshotName];
  if (!vsName) return undefined;
  const pvc = structuredClone(item);
  const spec = (pvc.spec ?? {}) as ClaimSpec;
  pvc.spec = spec;
  delete spec.volumeName;
  delete spec.dataSourceRef;
  if (!restoresVolumes(restore)) {
    delete spec.dataSource;
    return { item: pvc };
  }
  spec.dataSource = { apiGroup: GROUP, kind: 'VolumeSnapshot', name: restoredSnapshotName(restore.metadata.uid ?? '', vsName) };
  return { item: pvc, additionalItems: [{ groupResource: VOLUME_SNAPSHOTS, namespace: fromBackup.metadata.namespace ?? '', name: vsName }] };
}

/** The VolumeSnapshot made for this restore, and the content it is bound to as an additional item. */
const restoredVolumeSnapshot: RestoreItemAction['execute'] = async (item, ctx) => {
  const fromBackup = ctx.itemFromBackup;
  const boundContent = (fromBackup.status as { boundVolumeSnapshotContentName?: string } | undefined)?.boundVolumeSnapshotContentName;
  if (!boundContent) throw new Error(`VolumeSnapshot ${fromBackup.metadata.name} has no bound VolumeSnapshotContent in the backup`);
  const name = restoredSnapshotName(ctx.restore.metadata.uid ?? '', fromBackup.metadata.name);
  const vs = structuredClone(item);
  vs.metadata.name = name;
  vs.metadata.annotations = { ...(vs.metadata.annotations ?? {}), [Annotations.VSCDeletionPolicy]: 'Retain' };
  // The backup's UID label is the backup's bookkeeping (its deletion removes what carries it): not the restore's.
  if (vs.metadata.labels) delete vs.metadata.labels[Labels.BackupUID];
  const spec = (vs.spec ?? {}) as { source?: Record<string, unknown> };
  vs.spec = { ...spec, source: { volumeSnapshotContentName: name } };
  return { item: vs, additionalItems: [{ groupResource: VOLUME_SNAPSHOT_CONTENTS, name: boundContent }] };
};

interface ContentSpec {
  deletionPolicy?: string;
  source?: { volumeHandle?: string; snapshotHandle?: string };
  volumeSnapshotRef?: { namespace?: string; name?: string; uid?: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/** The content statically bound to the backed-up snapshot handle, with its deletion secret as an additional item. */
const restoredSnapshotContent: RestoreItemAction['execute'] = async (item, ctx) => {
  const fromBackup = ctx.itemFromBackup;
  const handle = (fromBackup.status as { snapshotHandle?: string } | undefined)?.snapshotHandle;
  if (!handle) throw new Error(`VolumeSnapshotContent ${fromBackup.metadata.name} has no snapshot handle in the backup`);
  const vsc = structuredClone(item);
  const spec = (vsc.spec ?? {}) as ContentSpec;
  const ref = { ...(spec.volumeSnapshotRef ?? {}) };
  const backedUpRef = ((fromBackup.spec ?? {}) as ContentSpec).volumeSnapshotRef;
  const name = restoredSnapshotName(ctx.restore.metadata.uid ?? '', backedUpRef?.name ?? '');
  const mapped = ref.namespace ? ctx.restore.spec.namespaceMapping?.[ref.namespace] : undefined;
  if (mapped) ref.namespace = mapped;
  ref.name = name;
  delete ref.uid;
  delete ref.resourceVersion;
  vsc.metadata.name = name;
  vsc.spec = { ...spec, volumeSnapshotRef: ref, deletionPolicy: 'Retain', source: { snapshotHandle: handle } };
  return withSecretOf(vsc, DELETION_SECRET);
};

export const volumeSnapshotRestoreAction = snapshotObjectRestoreAction('velero.io/csi-volumesnapshot-restorer', VOLUME_SNAPSHOTS, 'the VolumeSnapshot', restoredVolumeSnapshot);
export const volumeSnapshotContentRestoreAction = snapshotObjectRestoreAction('velero.io/csi-volumesnapshotcontent-restorer', VOLUME_SNAPSHOT_CONTENTS, 'the VolumeSnapshotContent', restoredSnapshotContent);
export const volumeSnapshotClassRestoreAction = snapshotObjectRestoreAction('velero.io/csi-volumesnapshotclass-restorer', VOLUME_SNAPSHOT_CLASSES, 'the VolumeSnapshotClass', async (item) => withSecretOf(item, LIST_SECRET));
