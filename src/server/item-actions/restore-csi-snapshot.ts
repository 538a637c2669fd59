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
const skipNoVolumes = (item: UnstructuredObject, what: string): RestoreItemResult => ({ item, skip: { reason: `the restore does not restore volumes (restorePVs is false), so ${what} is not restored` } });

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

export const volumeSnapshotRestoreAction: RestoreItemAction = {
  name: 'velero.io/csi-volumesnapshot-restorer',
  pluginKind: 'RestoreItemActionV2',
  appliesTo: () => ({ includedResources: [VOLUME_SNAPSHOTS] }),
  async execute(item, ctx) {
    if (!restoresVolumes(ctx.restore)) return skipNoVolumes(item, 'the VolumeSnapshot');
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
  },
};

interface ContentSpec {
  deletionPolicy?: string;
  source?: { volumeHandle?: string; snapshotHandle?: string };
  volumeSnapshotRef?: { namespace?: string; name?: string; uid?: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

export const volumeSnapshotContentRestoreAction: RestoreItemAction = {
  name: 'velero.io/csi-volumesnapshotcontent-restorer',
  pluginKind: 'RestoreItemActionV2',
  appliesTo: () => ({ includedResources: [VOLUME_SNAPSHOT_CONTENTS] }),
  async execute(item, ctx) {
    if (!restoresVolumes(ctx.restore)) return skipNoVolumes(item, 'the VolumeSnapshotContent');
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
    const secretName = vsc.metadata.annotations?.[DELETION_SECRET.name];
    const secretNamespace = vsc.metadata.annotations?.[DELETION_SECRET.namespace];
    return { item: vsc, ...(secretName && secretNamespace ? { additionalItems: [{ groupResource: 'secrets', namespace: secretNamespace, name: secretName }] } : {}) };
  },
};

export const volumeSnapshotClassRestoreAction: RestoreItemAction = {
  name: 'velero.io/csi-volumesnapshotclass-restorer',
  pluginKind: 'RestoreItemActionV2',
  appliesTo: () => ({ includedResources: [VOLUME_SNAPSHOT_CLASSES] }),
  async execute(item, ctx) {
    if (!restoresVolumes(ctx.restore)) return skipNoVolumes(item, 'the VolumeSnapshotClass');
    const secretName = item.metadata.annotations?.[LIST_SECRET.name];
    const secretNamespace = item.metadata.annotations?.[LIST_SECRET.namespace];
    return { item, ...(secretName && secretNamespace ? { additionalItems: [{ groupResource: 'secrets', namespace: secretNamespace, name: secretName }] } : {}) };
  },
};
