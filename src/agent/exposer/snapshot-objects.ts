/**
 * Typed views of the snapshot.storage.k8s.io/v1 objects the snapshot exposer reads and writes (only the fields it
 * uses, validated when read), and the manifests it creates for one DataUpload, as pure functions:
 *  - a pre-provisioned VolumeSnapshotContent carrying the source snapshot's handle with deletionPolicy Retain, so
 *    deleting it never deletes the real snapshot (the server does that through the source VolumeSnapshot);
 *  - a VolumeSnapshot in the install namespace bound to it;
 *  - the backup PVC restored from that VolumeSnapshot.
 * Its access goes through CustomObjectsApi (snapshot-api.ts).
 */
import type { V1OwnerReference, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { Type, type Static } from '@sinclair/typebox';
import { Annotations, Labels } from '../../api/constants.js';
import { parseWith } from '../../api/validation.js';
import { formatDuration, isGoDuration, parseDuration } from '../../api/duration.js';

export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';
export const SNAPSHOT_VERSION = 'v1';
export const SNAPSHOT_API_VERSION = `${SNAPSHOT_GROUP}/${SNAPSHOT_VERSION}`;

const Meta = Type.Object({
  name: Type.Optional(Type.String()),
  namespace: Type.Optional(Type.String()),
  uid: Type.Optional(Type.String()),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  ownerReferences: Type.Optional(Type.Array(Type.Object({ uid: Type.String() }))),
  deletionTimestamp: Type.Optional(Type.Unknown()),
});
const SnapshotError = Type.Object({ message: Type.Optional(Type.String()) });

export const VolumeSnapshotView = Type.Object({
  metadata: Meta,
  spec: Type.Object({
    source: Type.Object({ persistentVolumeClaimName: Type.Optional(Type.String()), volumeSnapshotContentName: Type.Optional(Type.String()) }),
    volumeSnapshotClassName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }),
  status: Type.Optional(
    Type.Object({
      boundVolumeSnapshotContentName: Type.Optional(Type.String()),
      readyToUse: Type.Optional(Type.Boolean()),
      /** A quantity ("16Mi"). */
      restoreSize: Type.Optional(Type.String()),
      error: Type.Optional(SnapshotError),
    }),
  ),
});
export type VolumeSnapshotView = Static<typeof VolumeSnapshotView>;

export const VolumeSnapshotContentView = Type.Object({
  metadata: Meta,
  spec: Type.Object({
    deletionPolicy: Type.String(),
    driver: Type.String(),
    source: Type.Object({ snapshotHandle: Type.Optional(Type.String()), volumeHandle: Type.Optional(Type.String()) }),
    volumeSnapshotRef: Type.Object({ namespace: Type.Optional(Type.String()), name: Type.Optional(Type.String()) }),
    volumeSnapshotClassName: Type.Optional(Type.String()),
    sourceVolumeMode: Type.Optional(Type.String()),
  }),
  status: Type.Optional(
    Type.Object({
      snapshotHandle: Type.Optional(Type.String()),
      readyToUse: Type.Optional(Type.Boolean()),
      /** Bytes. */
      restoreSize: Type.Optional(Type.Number()),
      error: Type.Optional(SnapshotError),
    }),
  ),
});
export type VolumeSnapshotContentView = Static<typeof VolumeSnapshotContentView>;

export const parseVolumeSnapshot = (raw: unknown): VolumeSnapshotView => parseWith(VolumeSnapshotView, 'VolumeSnapshot', raw);
export const parseVolumeSnapshotContent = (raw: unknown): VolumeSnapshotContentView => parseWith(VolumeSnapshotContentView, 'VolumeSnapshotContent', raw);

/** What the exposer takes from the source snapshot once it is ready. */
export interface SourceSnapshot {
  snapshotHandle: string;
  driver: string;
  /** The size to restore to: the VolumeSnapshot's restoreSize, else the VolumeSnapshotContent's in bytes. */
  restoreSize?: string;
  snapshotClass?: string;
}

export type SnapshotReadiness = { ready: true; content: string } | { ready: false; why: string } | { failed: string };

/** Whether the source VolumeSnapshot can be moved yet: ready, bound to a content; a snapshot error is final. */
export function snapshotReadiness(vs: VolumeSnapshotView): SnapshotReadiness {
  const name = `${vs.metadata.namespace ?? ''}/${vs.metadata.name ?? ''}`;
  if (vs.metadata.deletionTimestamp) return { failed: `volume snapshot ${name} is being deleted` };
  if (vs.status?.error?.message && vs.status.readyToUse !== true) return { failed: `volume snapshot ${name} failed: ${vs.status.error.message}` };
  if (vs.status?.readyToUse !== true) return { ready: false, why: `volume snapshot ${name} is not ready to use yet` };
  const content = vs.status.boundVolumeSnapshotContentName;
  if (!content) return { ready: false, why: `volume snapshot ${name} is not bound to a content yet` };
  return { ready: true, content };
}

/**
 * Whether the wait for the source snapshot to be ready is over: the DataUpload's `spec.operationTimeout` (the
 * backup's csiSnapshotTimeout, as in Velero) counted from its acceptance, when the expose starts. Undefined while
 * time is left, or when either is missing or unreadable (the prepare timeout alone then bounds the wait); otherwise
 * the DataUpload's failure reason, worded like Velero's.
 */
export function snapshotWaitTimedOut(opts: { snapshot: string; operationTimeout?: string | undefined; acceptedTimestamp?: string | undefined; now: Date }): string | undefined {
  if (!opts.operationTimeout || !isGoDuration(opts.operationTimeout)) return undefined;
  const timeoutMs = parseDuration(opts.operationTimeout);
  const accepted = Date.parse(opts.acceptedTimestamp ?? '');
  if (!(timeoutMs > 0) || !Number.isFinite(accepted) || opts.now.getTime() - accepted < timeoutMs) return undefined;
  return `error wait volume snapshot ready: volume snapshot ${opts.snapshot} is not ready until timeout ${formatDuration(timeoutMs)} (the backup's csiSnapshotTimeout)`;
}

/** The handle, driver and size of a ready snapshot; throws when its content has no handle. */
export function sourceSnapshotOf(vs: VolumeSnapshotView, vsc: VolumeSnapshotContentView): SourceSnapshot {
  const handle = vsc.status?.snapshotHandle || vsc.spec.source.snapshotHandle;
  if (!handle) throw new Error(`volume snapshot content ${vsc.metadata.name ?? ''} has no snapshot handle`);
  const quantity = vs.status?.restoreSize;
  const bytes = vsc.status?.restoreSize;
  const restoreSize = quantity && quantity !== '0' ? quantity : bytes ? String(bytes) : undefined;
  const snapshotClass = vs.spec.volumeSnapshotClassName ?? vsc.spec.volumeSnapshotClassName ?? undefined;
  return { snapshotHandle: handle, driver: vsc.spec.driver, ...(restoreSize ? { restoreSize } : {}), ...(snapshotClass ? { snapshotClass } : {}) };
}

/** The DataUpload (or DataDownload) the exposed objects belong to. */
export interface ExposeOwner {
  kind: 'DataUpload' | 'DataDownload';
  name: string;
  namespace: string;
  uid: string;
}

const MAX_NAME = 253;

/**
 * The cluster-scoped VolumeSnapshotContent of a DataUpload: its name and the first 8 characters of its UID, so two
 * installs whose DataUploads share a name never share a content.
 */
export function backupContentName(owner: { name: string; uid: string }): string {
  const suffix = `-${owner.uid.slice(0, 8)}`;
  return `${owner.name.slice(0, MAX_NAME - suffix.length)}${suffix}`;
}

function ownerReference(owner: ExposeOwner): V1OwnerReference {
  return { apiVersion: 'velero.io/v2alpha1', kind: owner.kind, name: owner.name, uid: owner.uid, controller: true };
}

const exposeLabelKey = (owner: ExposeOwner) => (owner.kind === 'DataUpload' ? Labels.DataUpload : Labels.DataDownload);

/** Labels on every object exposed for a DU/DD: its name, so the objects are found from it. */
export function exposeLabels(owner: ExposeOwner): Record<string, string> {
  return { [exposeLabelKey(owner)]: owner.name };
}

/**
 * Whether an object found under an exposed name is this owner's (AlreadyExists of it counts as done): owned by it,
 * or, for the cluster-scoped content whose name carries the owner's UID, labelled with it.
 */
export interface OwnedMeta {
  name?: string | undefined;
  labels?: Record<string, string> | undefined;
  ownerReferences?: { uid: string }[] | undefined;
}

export function isOwnedBy(meta: OwnedMeta | undefined, owner: ExposeOwner): boolean {
  if (meta?.ownerReferences?.some((r) => r.uid === owner.uid)) return true;
  return meta?.name === backupContentName(owner) && meta.labels?.[exposeLabelKey(owner)] === owner.name;
}

export interface VolumeSnapshotContentManifest {
  apiVersion: string;
  kind: 'VolumeSnapshotContent';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    deletionPolicy: 'Retain';
    driver: string;
    source: { snapshotHandle: string };
    volumeSnapshotRef: { apiVersion: string; kind: 'VolumeSnapshot'; namespace: string; name: string };
    volumeSnapshotClassName?: string;
    sourceVolumeMode?: string;
  };
}

export interface VolumeSnapshotManifest {
  apiVersion: string;
  kind: 'VolumeSnapshot';
  metadata: { name: string; namespace: string; labels: Record<string, string>; ownerReferences: V1OwnerReference[] };
  spec: { source: { volumeSnapshotContentName: string }; volumeSnapshotClassName?: string };
}

/**
 * The pre-provisioned content holding the source snapshot's handle. A cluster-scoped object cannot be owned by a
 * namespaced one; its name carries the owner's UID and it is labelled with the owner's name instead.
 */
export function backupVolumeSnapshotContent(opts: { owner: ExposeOwner; source: SourceSnapshot; volumeMode?: string }): VolumeSnapshotContentManifest {
  const { owner, source } = opts;
  return {
    apiVersion: SNAPSHOT_API_VERSION,
    kind: 'VolumeSnapshotContent',
    metadata: { name: backupContentName(owner), labels: exposeLabels(owner) },
    spec: {
      deletionPolicy: 'Retain',
      driver: source.driver,
      source: { snapshotHandle: source.snapshotHandle },
      volumeSnapshotRef: { apiVersion: SNAPSHOT_API_VERSION, kind: 'VolumeSnapshot', namespace: owner.namespace, name: owner.name },
      ...(source.snapshotClass ? { volumeSnapshotClassName: source.snapshotClass } : {}),
      ...(opts.volumeMode ? { sourceVolumeMode: opts.volumeMode } : {}),
    },
  };
}

/** The VolumeSnapshot in the install namespace (name = DU name) bound to that content. */
export function backupVolumeSnapshot(opts: { owner: ExposeOwner; source: SourceSnapshot }): VolumeSnapshotManifest {
  const { owner, source } = opts;
  return {
    apiVersion: SNAPSHOT_API_VERSION,
    kind: 'VolumeSnapshot',
    metadata: { name: owner.name, namespace: owner.namespace, labels: exposeLabels(owner), ownerReferences: [ownerReference(owner)] },
    spec: { source: { volumeSnapshotContentName: backupContentName(owner) }, ...(source.snapshotClass ? { volumeSnapshotClassName: source.snapshotClass } : {}) },
  };
}

/** A PVC of the install namespace named after its DU/DD, owned by it. */
function exposedPvc(owner: ExposeOwner, spec: NonNullable<V1PersistentVolumeClaim['spec']>, annotations?: Record<string, string>): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: owner.name,
      namespace: owner.namespace,
      labels: exposeLabels(owner),
      ...(annotations && Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}),
      ownerReferences: [ownerReference(owner)],
    },
    spec,
  };
}

/**
 * The backup PVC: restored from the install-namespace VolumeSnapshot in `storageClass` (the source PVC's, or the one
 * the node agent's `backupPVC` names for it), with the source PVC's volume mode, ReadWriteOnce (only the backup pod
 * uses it) or ReadOnlyMany when `backupPVC` asks for read-only, the snapshot's restore size or else the source PVC's
 * request, and `backupPVC`'s annotations.
 */
export function backupPvc(opts: {
  owner: ExposeOwner;
  sourcePvc: V1PersistentVolumeClaim;
  storageClass: string;
  restoreSize?: string | undefined;
  readOnly?: boolean;
  annotations?: Record<string, string> | undefined;
}): V1PersistentVolumeClaim {
  const size = opts.restoreSize ?? opts.sourcePvc.spec?.resources?.requests?.storage;
  if (!size) throw new Error(`cannot size the backup volume: the snapshot has no restore size and PVC ${opts.sourcePvc.metadata?.namespace ?? ''}/${opts.sourcePvc.metadata?.name ?? ''} no storage request`);
  return exposedPvc(opts.owner, {
    ...(opts.storageClass ? { storageClassName: opts.storageClass } : {}),
    accessModes: [opts.readOnly ? 'ReadOnlyMany' : 'ReadWriteOnce'],
    resources: { requests: { storage: size } },
    volumeMode: opts.sourcePvc.spec?.volumeMode ?? 'Filesystem',
    dataSource: { apiGroup: SNAPSHOT_GROUP, kind: 'VolumeSnapshot', name: opts.owner.name },
  }, opts.annotations);
}

/**
 * The restore PVC: the target PVC's class, access modes, requests and volume mode, without its selector; with
 * `selectedNode`, annotated to be provisioned there (its pod is placed by nodeName, past the scheduler that would
 * otherwise choose the node of a WaitForFirstConsumer claim).
 */
export function restorePvc(opts: { owner: ExposeOwner; targetPvc: V1PersistentVolumeClaim; selectedNode?: string }): V1PersistentVolumeClaim {
  const t = opts.targetPvc.spec ?? {};
  return exposedPvc(
    opts.owner,
    {
      ...(t.storageClassName ? { storageClassName: t.storageClassName } : {}),
      accessModes: t.accessModes?.length ? [...t.accessModes] : ['ReadWriteOnce'],
      resources: { requests: { ...(t.resources?.requests ?? {}) } },
      volumeMode: t.volumeMode ?? 'Filesystem',
    },
    opts.selectedNode ? { [Annotations.SelectedNode]: opts.selectedNode } : undefined,
  );
}
