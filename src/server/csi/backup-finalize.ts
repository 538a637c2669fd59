/**
 * Finalizing a backup's kept CSI snapshots, once none is still being cut:
 *   1. plan: which snapshots are ready (their VolumeSnapshot, content and class, read from the cluster, or from the
 *      backup's `-csi-*.json.gz` files when an earlier run already let them go) and which were given up on;
 *   2. store: the backup tarball gets the VolumeSnapshots, contents and classes (Velero's annotations on the
 *      VolumeSnapshot, the original deletion policy on the content) and the snapshotted PVCs get Velero's
 *      `velero.io/volume-snapshot-name` label and annotation; the resource list and Velero's three files
 *      `-csi-volumesnapshots.json.gz`, `-csi-volumesnapshotcontents.json.gz`, `-csi-volumesnapshotclasses.json.gz`
 *      are written;
 *   3. release: ready snapshots are let go from the cluster (the storage's snapshot is kept for the backup), the
 *      others are deleted with their storage snapshot.
 * The operations controller runs 1, writes the volume info, item operations, results and log with what 1 found,
 * then runs 2 and 3. Every step can run again after a restart and gives the same result.
 */
import { OperationPhase, statusTime, type Backup, type BackupOperation } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { rewriteArchive } from '../archive/rewrite.js';
import type { BackupStore } from '../../storage/backup-store.js';
import type { BackupVolumeInfo } from '../../api/volume-info.js';
import { readVolumeSnapshotClass } from './snapshot-api.js';
import { cleanupCsiSnapshot, releaseKeptSnapshot } from './snapshot-cleanup.js';
import {
  CSI_VOLUME_SNAPSHOT_BACKUP_ACTION,
  SNAPSHOT_GROUP,
  VOLUME_SNAPSHOTS,
  VOLUME_SNAPSHOT_CLASSES,
  VOLUME_SNAPSHOT_CONTENTS,
  backedUpVolumeSnapshot,
  backedUpVolumeSnapshotContent,
  csiSnapshotOperation,
  csiSnapshotVolumeInfo,
  quantityBytes,
  snapshottedClaim,
  type CsiSnapshotRef,
  type CsiSnapshotState,
  type VolumeSnapshot,
  type VolumeSnapshotClass,
  type VolumeSnapshotContent,
} from './snapshot-objects.js';
import { csiSnapshotTimeoutMs, readCsiSnapshotStates, refOfVolumeSnapshot, trackCsiSnapshots } from './snapshot-tracking.js';
import { csiSnapshotTimeoutOf } from '../datamover/backup-decision.js';

/** A snapshot the backup keeps, with the objects that go into it. */
export interface KeptSnapshot {
  ref: CsiSnapshotRef;
  /** As stored in the backup (Velero's annotations). */
  snapshot: VolumeSnapshot;
  content: VolumeSnapshotContent;
  /** Whether the VolumeSnapshot is still in the cluster (else an earlier run let it go). */
  inCluster: boolean;
}

export interface CsiFinalization {
  kept: KeptSnapshot[];
  failed: { ref: CsiSnapshotRef; error: string }[];
  classes: VolumeSnapshotClass[];
  /** Item operations of every CSI snapshot (stored ones kept for snapshots no longer in the cluster). */
  operations: BackupOperation[];
  errors: { namespace: string; message: string }[];
  attempted: number;
  completed: number;
}

const claimKey = (ns: string | undefined, name: string | undefined) => `${ns ?? ''}/${name ?? ''}`;
const asArray = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

/** The content's deletion policy before the backup changed it (recorded on the stored VolumeSnapshot). */
function originalPolicy(vs: VolumeSnapshot | undefined, vsc: VolumeSnapshotContent | undefined): string | undefined {
  return vs?.metadata.annotations?.['velero.io/csi-vsc-deletion-policy'] || vsc?.spec?.deletionPolicy;
}

export async function planCsiFinalization(opts: { kube: Kube; backup: Backup; store: BackupStore; now: Date }): Promise<CsiFinalization> {
  const { backup, store } = opts;
  const name = backup.metadata.name ?? '';
  const storedInfo = asArray<BackupVolumeInfo>(await store.getBackupJson(name, 'volumeInfo'));
  const pvOf = new Map(storedInfo.filter((v) => v.backupMethod === 'CSISnapshot' && !v.snapshotDataMoved).map((v) => [claimKey(v.pvcNamespace, v.pvcName), v.pvName ?? '']));
  const states: CsiSnapshotState[] = (await readCsiSnapshotStates(opts.kube, backup)).map((s) => ({ ...s, ref: { ...s.ref, pvName: pvOf.get(claimKey(s.ref.namespace, s.ref.pvcName)) ?? '' } }));
  const tracking = trackCsiSnapshots({ states, timeoutMs: csiSnapshotTimeoutMs(backup), timeout: csiSnapshotTimeoutOf(backup), nowMs: opts.now.getTime() });

  const kept: KeptSnapshot[] = [];
  const failed: { ref: CsiSnapshotRef; error: string }[] = [];
  const operations: BackupOperation[] = [];
  for (const v of tracking.verdicts) {
    const { state } = v;
    if (v.phase === OperationPhase.Completed && state.snapshot && state.content) {
      const policy = originalPolicy(state.snapshot, state.content);
      kept.push({
        ref: state.ref,
        snapshot: backedUpVolumeSnapshot(state.snapshot, state.content, policy),
        content: backedUpVolumeSnapshotContent(state.content, name, policy),
        inCluster: true,
      });
      operations.push(csiSnapshotOperation({ backup, state, phase: OperationPhase.Completed, now: opts.now }));
    } else {
      // Not ready by now: finalize runs only once none is still being cut, so this one is given up on.
      const error = 'error' in v ? v.error : `CSI snapshot ${state.ref.namespace}/${state.ref.name} was not ready`;
      failed.push({ ref: state.ref, error });
      operations.push(csiSnapshotOperation({ backup, state, phase: OperationPhase.Failed, error, now: opts.now }));
    }
  }

  // Snapshots an earlier run of this finalization already let go: from the stored files.
  const inCluster = new Set(states.map((s) => claimKey(s.ref.namespace, s.ref.name)));
  const storedSnapshots = asArray<VolumeSnapshot>(await store.getBackupJson(name, 'csiVolumeSnapshots'));
  const storedContents = new Map(asArray<VolumeSnapshotContent>(await store.getBackupJson(name, 'csiVolumeSnapshotContents')).map((c) => [c.metadata.name ?? '', c]));
  for (const vs of storedSnapshots) {
    if (inCluster.has(claimKey(vs.metadata.namespace, vs.metadata.name))) continue;
    const content = storedContents.get(vs.status?.boundVolumeSnapshotContentName ?? '');
    if (!content) continue;
    const ref = refOfVolumeSnapshot(vs);
    ref.pvName = pvOf.get(claimKey(ref.namespace, ref.pvcName)) ?? '';
    kept.push({ ref, snapshot: vs, content, inCluster: false });
  }
  const storedOps = asArray<BackupOperation>(await store.getBackupJson(name, 'itemOperations'));
  for (const op of storedOps) {
    if (op.spec.backupItemAction !== CSI_VOLUME_SNAPSHOT_BACKUP_ACTION) continue;
    const key = claimKey(op.spec.resourceIdentifier.Namespace, op.spec.resourceIdentifier.Name);
    if (!inCluster.has(key)) operations.push(op);
  }

  const classes = await classesOf(opts.kube, kept, asArray<VolumeSnapshotClass>(await store.getBackupJson(name, 'csiVolumeSnapshotClasses')));
  return {
    kept,
    failed,
    classes,
    operations,
    errors: failed.map((f) => ({ namespace: f.ref.namespace, message: f.error })),
    attempted: kept.length + failed.length,
    completed: kept.length,
  };
}

/** The classes the kept snapshots name: from the cluster, else as stored by an earlier run. */
async function classesOf(kube: Kube, kept: readonly KeptSnapshot[], stored: readonly VolumeSnapshotClass[]): Promise<VolumeSnapshotClass[]> {
  const names = [...new Set(kept.map((k) => k.snapshot.spec?.volumeSnapshotClassName ?? k.content.spec?.volumeSnapshotClassName ?? '').filter(Boolean))].sort();
  const out: VolumeSnapshotClass[] = [];
  for (const n of names) {
    const cls = (await readVolumeSnapshotClass(kube, n)) ?? stored.find((c) => c.metadata.name === n);
    if (cls) out.push({ ...cls, apiVersion: cls.apiVersion ?? `${SNAPSHOT_GROUP}/v1`, kind: cls.kind ?? 'VolumeSnapshotClass' });
  }
  return out;
}

/** The volume info with each CSI snapshot's entry made final. */
export function finalCsiVolumeInfo(stored: readonly BackupVolumeInfo[], plan: CsiFinalization, now: Date): BackupVolumeInfo[] {
  const updates = new Map<string, BackupVolumeInfo>();
  const byClaim = new Map(stored.map((e) => [claimKey(e.pvcNamespace, e.pvcName), e]));
  for (const k of plan.kept) {
    if (!k.inCluster) continue; // made final by the run that let it go
    const base = byClaim.get(claimKey(k.ref.namespace, k.ref.pvcName));
    updates.set(claimKey(k.ref.namespace, k.ref.pvcName), csiSnapshotVolumeInfo({ ref: k.ref, snapshot: k.snapshot, content: k.content, result: 'succeeded', completed: statusTime(now), base }));
  }
  for (const f of plan.failed) {
    const base = byClaim.get(claimKey(f.ref.namespace, f.ref.pvcName));
    updates.set(claimKey(f.ref.namespace, f.ref.pvcName), csiSnapshotVolumeInfo({ ref: f.ref, result: 'failed', completed: statusTime(now), base }));
  }
  const out = stored.map((e) => (e.backupMethod === 'CSISnapshot' && !e.snapshotDataMoved ? (updates.get(claimKey(e.pvcNamespace, e.pvcName)) ?? e) : e));
  const present = new Set(out.map((e) => claimKey(e.pvcNamespace, e.pvcName)));
  for (const [key, e] of updates) if (!present.has(key)) out.push(e);
  return out;
}

/** Step 2: the tarball, resource list and Velero's CSI files of the backup. */
export async function storeCsiSnapshots(opts: { store: BackupStore; backup: Backup; plan: CsiFinalization; tmpDir?: string; log: Logger }): Promise<void> {
  const { store, plan } = opts;
  const name = opts.backup.metadata.name ?? '';
  const snapshots = plan.kept.map((k) => k.snapshot);
  const contents = plan.kept.map((k) => k.content);
  await store.putBackupJson(name, 'csiVolumeSnapshots', snapshots);
  await store.putBackupJson(name, 'csiVolumeSnapshotContents', contents);
  await store.putBackupJson(name, 'csiVolumeSnapshotClasses', plan.classes);
  if (!plan.kept.length) return;

  const byClaim = new Map(plan.kept.map((k) => [claimKey(k.ref.namespace, k.ref.pvcName), k]));
  const rewritten = await rewriteArchive(await store.getBackupContents(name), {
    ...(opts.tmpDir ? { tmpDir: opts.tmpDir } : {}),
    replace: (item, object) => {
      if (item.groupResource !== 'persistentvolumeclaims') return undefined;
      const k = byClaim.get(claimKey(item.namespace, item.name));
      if (!k) return undefined;
      const size = quantityBytes(k.snapshot.status?.restoreSize) ?? k.content.status?.restoreSize;
      return snapshottedClaim(object as Parameters<typeof snapshottedClaim>[0], k.ref.name, name, size);
    },
    add: [
      ...plan.kept.map((k) => ({ groupResource: VOLUME_SNAPSHOTS, namespace: k.ref.namespace, name: k.ref.name, version: 'v1', object: k.snapshot })),
      ...contents.map((c) => ({ groupResource: VOLUME_SNAPSHOT_CONTENTS, name: c.metadata.name ?? '', version: 'v1', object: c })),
      ...plan.classes.map((c) => ({ groupResource: VOLUME_SNAPSHOT_CLASSES, name: c.metadata.name ?? '', version: 'v1', object: c })),
    ],
  });
  try {
    await store.putBackupContents(name, rewritten.open(), rewritten.size);
  } finally {
    await rewritten.dispose();
  }
  const list = ((await store.getBackupJson(name, 'resourceList')) as Record<string, string[]> | undefined) ?? {};
  const add = (key: string, entries: string[]) => {
    list[key] = [...new Set([...(list[key] ?? []), ...entries])].sort();
  };
  add(`${SNAPSHOT_GROUP}/v1/VolumeSnapshot`, plan.kept.map((k) => `${k.ref.namespace}/${k.ref.name}`));
  add(`${SNAPSHOT_GROUP}/v1/VolumeSnapshotContent`, contents.map((c) => c.metadata.name ?? ''));
  if (plan.classes.length) add(`${SNAPSHOT_GROUP}/v1/VolumeSnapshotClass`, plan.classes.map((c) => c.metadata.name ?? ''));
  await store.putBackupJson(name, 'resourceList', Object.fromEntries(Object.entries(list).sort(([a], [b]) => (a < b ? -1 : 1))));
  opts.log.info({ backup: name, volumeSnapshots: snapshots.length, volumeSnapshotContents: contents.length, volumeSnapshotClasses: plan.classes.length }, 'Stored the CSI snapshots in the backup');
}

/** Step 3: kept snapshots leave the cluster (their storage snapshot stays), failed ones are deleted with it. */
export async function releaseCsiSnapshots(opts: { kube: Kube; plan: CsiFinalization; log: Logger }): Promise<void> {
  for (const k of opts.plan.kept) if (k.inCluster) await releaseKeptSnapshot({ kube: opts.kube, namespace: k.ref.namespace, name: k.ref.name, log: opts.log });
  for (const f of opts.plan.failed) await cleanupCsiSnapshot({ kube: opts.kube, namespace: f.ref.namespace, name: f.ref.name, log: opts.log });
}

/** Whether a backup keeps CSI snapshots (no data movement) and so may have them to finalize. */
export function keepsCsiSnapshots(backup: Backup): boolean {
  return backup.spec?.snapshotMoveData !== true;
}
