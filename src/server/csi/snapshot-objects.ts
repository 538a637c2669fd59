/**
 * The shapes of CSI snapshots a backup keeps (no data movement), as Velero's CSI actions make and record them:
 * the item operation of each VolumeSnapshot (`velero.io/csi-volumesnapshot-backupper`, operation ID
 * `<namespace>/<volumesnapshot>/<RFC 3339 start>`), its volume info entry (`CSISnapshot`, `preserveLocalSnapshot`),
 * the annotations the backed-up VolumeSnapshot and PVC carry so a restore (cairn's or Velero's) can bring the
 * volume back from the snapshot handle. Pure functions.
 */
import { Annotations, Labels, OperationPhase, labelValue, statusTime, type Backup, type BackupOperation, type ResourceIdentifier } from '../../api/index.js';
import { BackupMethods, inVeleroOrder, type BackupVolumeInfo, type CSISnapshotInfo } from '../../api/volume-info.js';

export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';
export const VOLUME_SNAPSHOTS = `volumesnapshots.${SNAPSHOT_GROUP}`;
export const VOLUME_SNAPSHOT_CONTENTS = `volumesnapshotcontents.${SNAPSHOT_GROUP}`;
export const VOLUME_SNAPSHOT_CLASSES = `volumesnapshotclasses.${SNAPSHOT_GROUP}`;
/** The backup item action Velero records CSI snapshot operations under. */
export const CSI_VOLUME_SNAPSHOT_BACKUP_ACTION = 'velero.io/csi-volumesnapshot-backupper';

/** A VolumeSnapshot as the server reads it (snapshot.storage.k8s.io/v1; no typed client exists). */
export interface VolumeSnapshot {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    creationTimestamp?: string | Date;
    deletionTimestamp?: unknown;
    [key: string]: unknown;
  };
  spec?: { source?: { persistentVolumeClaimName?: string; volumeSnapshotContentName?: string }; volumeSnapshotClassName?: string };
  status?: {
    readyToUse?: boolean;
    boundVolumeSnapshotContentName?: string;
    restoreSize?: string | number;
    creationTime?: string;
    error?: { message?: string; time?: string };
  };
}

export interface VolumeSnapshotContent {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown };
  spec?: {
    driver?: string;
    deletionPolicy?: string;
    volumeSnapshotClassName?: string;
    source?: { volumeHandle?: string; snapshotHandle?: string };
    volumeSnapshotRef?: { apiVersion?: string; kind?: string; namespace?: string; name?: string; uid?: string; resourceVersion?: string };
    [key: string]: unknown;
  };
  status?: { snapshotHandle?: string; restoreSize?: number; readyToUse?: boolean; creationTime?: number; error?: { message?: string } };
}

export interface VolumeSnapshotClass {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown };
  driver?: string;
  deletionPolicy?: string;
  parameters?: Record<string, string>;
}

/** One CSI snapshot a backup takes: the VolumeSnapshot and the claim it is of. */
export interface CsiSnapshotRef {
  /** The VolumeSnapshot, in the claim's namespace. */
  namespace: string;
  name: string;
  pvcName: string;
  pvcUid: string;
  pvName: string;
  driver: string;
  snapshotClass: string;
  /** The VolumeSnapshot's creation (RFC 3339): the start of its operation. */
  created: string;
}

/** Go's RFC 3339 form, seconds only (`2026-01-02T03:04:05Z`). */
export function rfc3339Seconds(d: Date | string): string {
  return statusTime(new Date(d));
}

/** Velero's operation ID of a CSI snapshot: `<namespace>/<volumesnapshot>/<RFC 3339 start>`. */
export function csiSnapshotOperationId(ref: Pick<CsiSnapshotRef, 'namespace' | 'name' | 'created'>): string {
  return `${ref.namespace}/${ref.name}/${rfc3339Seconds(ref.created)}`;
}

/** The operation's resource: the VolumeSnapshot (Velero's resource identifier has capitalised keys). */
export function volumeSnapshotIdentifier(namespace: string, name: string): ResourceIdentifier {
  return { Group: SNAPSHOT_GROUP, Resource: 'volumesnapshots', Namespace: namespace, Name: name };
}

/** Where a CSI snapshot is: its VolumeSnapshot's readiness, content and error, as the tracker sees them. */
export interface CsiSnapshotState {
  ref: CsiSnapshotRef;
  /** Undefined when the VolumeSnapshot is gone. */
  snapshot?: VolumeSnapshot | undefined;
  content?: VolumeSnapshotContent | undefined;
}

/** The snapshot is usable: ready, with a storage handle to restore from. */
export function isSnapshotReady(s: CsiSnapshotState): boolean {
  return s.snapshot?.status?.readyToUse === true && Boolean(s.content?.status?.snapshotHandle);
}

/** The error the snapshot controller or the driver reported, if any (the content's is the driver's own). */
export function snapshotError(s: CsiSnapshotState): string | undefined {
  return s.content?.status?.error?.message || s.snapshot?.status?.error?.message || undefined;
}

/** The volume info entry of a kept CSI snapshot; `result` once known. */
export function csiSnapshotVolumeInfo(opts: {
  ref: CsiSnapshotRef;
  snapshot?: VolumeSnapshot | undefined;
  content?: VolumeSnapshotContent | undefined;
  result?: 'succeeded' | 'failed' | undefined;
  completed?: string | undefined;
  base?: BackupVolumeInfo | undefined;
}): BackupVolumeInfo {
  const { ref, snapshot, content } = opts;
  const info: CSISnapshotInfo = {
    snapshotHandle: content?.status?.snapshotHandle ?? '',
    size: quantityBytes(snapshot?.status?.restoreSize) ?? content?.status?.restoreSize ?? 0,
    driver: content?.spec?.driver || ref.driver,
    vscName: snapshot?.status?.boundVolumeSnapshotContentName ?? '',
    operationID: csiSnapshotOperationId(ref),
    ReadyToUse: snapshot?.status?.readyToUse ?? null,
  };
  const entry: BackupVolumeInfo = {
    ...(opts.base ?? {}),
    pvcName: ref.pvcName,
    pvcNamespace: ref.namespace,
    pvName: ref.pvName,
    backupMethod: BackupMethods.CSISnapshot,
    snapshotDataMoved: false,
    preserveLocalSnapshot: true,
    skipped: false,
    csiSnapshotInfo: info,
  };
  delete entry.skippedReason;
  delete entry.result;
  delete entry.completionTimestamp;
  const started = snapshot?.status?.creationTime ?? ref.created;
  if (started) entry.startTimestamp = rfc3339Seconds(started);
  if (opts.result) entry.result = opts.result;
  if (opts.completed) entry.completionTimestamp = opts.completed;
  return inVeleroOrder(entry);
}

/** The BackupOperation of a CSI snapshot, as Velero's VolumeSnapshot action records it. */
export function csiSnapshotOperation(opts: {
  backup: Backup;
  state: CsiSnapshotState;
  phase: OperationPhase;
  error?: string | undefined;
  now: Date;
}): BackupOperation {
  const { ref, snapshot } = opts.state;
  const vsc = snapshot?.status?.boundVolumeSnapshotContentName;
  return {
    spec: {
      backupName: opts.backup.metadata.name ?? '',
      backupUID: opts.backup.metadata.uid ?? '',
      backupItemAction: CSI_VOLUME_SNAPSHOT_BACKUP_ACTION,
      resourceIdentifier: volumeSnapshotIdentifier(ref.namespace, ref.name),
      operationID: csiSnapshotOperationId(ref),
      postOperationItems: [
        volumeSnapshotIdentifier(ref.namespace, ref.name),
        ...(vsc ? [{ Group: SNAPSHOT_GROUP, Resource: 'volumesnapshotcontents', Namespace: '', Name: vsc }] : []),
      ],
    },
    status: {
      phase: opts.phase,
      ...(opts.error ? { error: opts.error } : {}),
      created: rfc3339Seconds(ref.created),
      started: rfc3339Seconds(ref.created),
      ...(opts.phase === OperationPhase.Completed || opts.phase === OperationPhase.Failed ? { updated: rfc3339Seconds(opts.now) } : {}),
    },
  };
}

/** A Kubernetes quantity as bytes (`1Gi`, `500M`, `1073741824`); undefined when unreadable. */
export function quantityBytes(q: string | number | undefined): number | undefined {
  if (q === undefined || q === '') return undefined;
  if (typeof q === 'number') return q;
  const m = /^(\d+(?:\.\d+)?)([KMGTPE]i?|[kmun])?$/.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] ?? '';
  const binary: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
  const decimal: Record<string, number> = { k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, m: 1e-3, u: 1e-6, n: 1e-9 };
  return Math.round(n * (binary[unit] ?? decimal[unit] ?? 1));
}

/** Bytes as the binary quantity Velero writes (`resource.NewQuantity(n, BinarySI).String()`: `1Gi`, `1536Mi`, `1000`). */
export function binaryQuantity(bytes: number): string {
  const units = ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'];
  for (const [i, u] of units.entries()) {
    const size = 2 ** (10 * (6 - i));
    if (bytes !== 0 && bytes % size === 0) return `${bytes / size}${u}`;
  }
  return String(bytes);
}

/**
 * The VolumeSnapshot as it goes into the backup: Velero's annotations (the content's deletion policy, the storage's
 * snapshot handle, the driver, the restore size) so a restore can bind a new content to the handle, and
 * `must-include-additional-items`.
 */
export function backedUpVolumeSnapshot(vs: VolumeSnapshot, vsc: VolumeSnapshotContent | undefined, originalPolicy: string | undefined): VolumeSnapshot {
  const out = structuredClone(vs);
  const ann: Record<string, string> = { ...(out.metadata.annotations ?? {}) };
  if (vsc) {
    ann[Annotations.VSCDeletionPolicy] = originalPolicy || vsc.spec?.deletionPolicy || '';
    if (vsc.status?.snapshotHandle) {
      ann[Annotations.VolumeSnapshotHandle] = vsc.status.snapshotHandle;
      ann[Annotations.CSIDriverName] = vsc.spec?.driver ?? '';
    }
    if (vsc.status?.restoreSize !== undefined) ann[Annotations.VolumeSnapshotRestoreSize] = binaryQuantity(vsc.status.restoreSize);
  }
  ann[Annotations.MustIncludeAdditionalItems] = 'true';
  out.metadata.annotations = ann;
  return withTypeMeta(out, 'VolumeSnapshot');
}

/** The content as it goes into the backup: its original deletion policy and the backup's name label. */
export function backedUpVolumeSnapshotContent(vsc: VolumeSnapshotContent, backupName: string, originalPolicy: string | undefined): VolumeSnapshotContent {
  const out = structuredClone(vsc);
  out.metadata.labels = { ...(out.metadata.labels ?? {}), [Labels.BackupName]: labelValue(backupName) };
  if (originalPolicy && out.spec) out.spec.deletionPolicy = originalPolicy;
  return withTypeMeta(out, 'VolumeSnapshotContent');
}

interface ClaimLike {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { resources?: { requests?: Record<string, string | number> } };
}

/**
 * The claim as it goes into the backup once its snapshot is taken: Velero's label and annotations naming the
 * snapshot, and (as Velero's CSI action does) a storage request raised to the snapshot's restore size when that is
 * larger, so the volume restored from it fits.
 */
export function snapshottedClaim<T extends ClaimLike>(pvc: T, vsName: string, backupName: string, restoreSize?: number): T {
  const out = structuredClone(pvc);
  out.metadata.labels = { ...(out.metadata.labels ?? {}), [Labels.VolumeSnapshotName]: vsName, [Labels.BackupName]: labelValue(backupName) };
  out.metadata.annotations = { ...(out.metadata.annotations ?? {}), [Labels.VolumeSnapshotName]: vsName, [Annotations.MustIncludeAdditionalItems]: 'true' };
  const requests = out.spec?.resources?.requests;
  const requested = quantityBytes(requests?.storage);
  if (requests && restoreSize !== undefined && requested !== undefined && restoreSize > requested) requests.storage = binaryQuantity(restoreSize);
  return out;
}

function withTypeMeta<T extends { apiVersion?: string; kind?: string }>(obj: T, kind: string): T {
  return { ...obj, apiVersion: obj.apiVersion ?? `${SNAPSHOT_GROUP}/v1`, kind: obj.kind ?? kind };
}
