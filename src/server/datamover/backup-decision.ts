/**
 * Which PVCs of a backup get CSI snapshot data movement, and with which VolumeSnapshotClass (the contract of issue
 * 7): the backup asks for it (`snapshotMoveData`, `snapshotVolumes` not false), the claim is Bound, fs-backup did
 * not take it in this backup, and its driver has a snapshot class. Every "no" comes with the reason recorded in the
 * volume info (`csiSnapshot: <reason>;`). Pure functions.
 */
import { AsyncOperationIDPrefix, Labels, labelValue, type Backup } from '../../api/index.js';

/** The parts of a VolumeSnapshotClass the choice reads. */
export interface SnapshotClassLike {
  metadata: { name: string; labels?: Record<string, string> | undefined; annotations?: Record<string, string> | undefined };
  driver: string;
}

/** The Kubernetes annotation marking a driver's default VolumeSnapshotClass. */
export const DEFAULT_SNAPSHOT_CLASS_ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';

/**
 * The snapshot class for a driver: the one labelled `velero.io/csi-volumesnapshot-class: "true"`, else the one
 * annotated as the default class, else the only one of the driver. Several candidates at the same level are
 * ambiguous: the first by name is taken (stable across runs).
 */
export function pickSnapshotClass(classes: readonly SnapshotClassLike[], driver: string): SnapshotClassLike | undefined {
  const ofDriver = classes.filter((c) => c.driver === driver).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  const labelled = ofDriver.filter((c) => c.metadata.labels?.[Labels.VolumeSnapshotClassSelector] === 'true');
  if (labelled.length) return labelled[0];
  const defaults = ofDriver.filter((c) => c.metadata.annotations?.[DEFAULT_SNAPSHOT_CLASS_ANNOTATION] === 'true');
  if (defaults.length) return defaults[0];
  return ofDriver.length === 1 ? ofDriver[0] : undefined;
}

/** What the decision knows of a PVC (read at backup time). */
export interface ClaimForDataMovement {
  namespace: string;
  name: string;
  uid: string;
  phase: string;
  volumeName: string;
  storageClassName: string;
}

export interface DataMovementChoice {
  /** Move the claim's data: the driver and snapshot class to use. */
  move?: { driver: string; snapshotClass: string };
  /** Not moved: the volume info reason, `csiSnapshot: ...;`. */
  skippedReason?: string;
}

export interface DecideOptions {
  backup: Backup;
  claim: ClaimForDataMovement;
  /** UIDs of the claims fs-backup took in this backup (a PVB exists for them). */
  takenByFsBackup: ReadonlySet<string>;
  /** The claim's CSI driver: its StorageClass's provisioner (or the PV's csi.driver); '' when unknown. */
  driver: string;
  classes: readonly SnapshotClassLike[];
}

const reason = (text: string) => `csiSnapshot: ${text};`;

/** Whether a backup asks for snapshot data movement at all (a backup that does not is left exactly as before). */
export function wantsDataMovement(backup: Backup): boolean {
  return backup.spec?.snapshotMoveData === true;
}

export function decideDataMovement(opts: DecideOptions): DataMovementChoice {
  const { backup, claim } = opts;
  if (!wantsDataMovement(backup)) return { skippedReason: reason('the backup does not ask for snapshot data movement') };
  if (backup.spec?.snapshotVolumes === false) return { skippedReason: reason('the backup has snapshotVolumes set to false') };
  if (claim.phase !== 'Bound' || !claim.volumeName) return { skippedReason: reason(`PVC ${claim.namespace}/${claim.name} is not bound`) };
  if (opts.takenByFsBackup.has(claim.uid)) return { skippedReason: reason('the volume is backed up by pod volume backup') };
  if (!opts.driver) {
    const sc = claim.storageClassName ? `storage class ${claim.storageClassName} has no provisioner` : 'PVC has no storage class and its volume is not a CSI volume';
    return { skippedReason: reason(sc) };
  }
  const cls = pickSnapshotClass(opts.classes, opts.driver);
  if (!cls) return { skippedReason: reason(`no VolumeSnapshotClass for the CSI driver ${opts.driver}`) };
  return { move: { driver: opts.driver, snapshotClass: cls.metadata.name } };
}

/**
 * Velero's async operation id of a DataUpload: `du-<backup uid>.<pvc uid>` made a valid label value (two UIDs are
 * longer than 63 characters, so it is cut and hashed as Velero does); the same text is the DataUpload's label.
 */
export function dataUploadOperationId(backupUid: string, pvcUid: string): string {
  return labelValue(`${AsyncOperationIDPrefix.DataUpload}${backupUid}.${pvcUid}`);
}

/** The backup's itemOperationTimeout as a Go duration (the server fills it in; 4h when absent). */
export function itemOperationTimeoutOf(backup: Backup): string {
  return backup.spec?.itemOperationTimeout || '4h0m0s';
}

/** Whether an object was made by a backup's data movement (the VolumeSnapshots it creates carry the backup's UID). */
export function madeByBackup(labels: Record<string, string> | undefined, backupUid: string): boolean {
  return Boolean(backupUid) && labels?.[Labels.BackupUID] === backupUid;
}
