/**
 * Which PVCs of a backup are snapshotted through CSI, and with which VolumeSnapshotClass: no volume policy says
 * otherwise, `snapshotVolumes` is not false, the claim is Bound to a CSI volume, fs-backup did not take it in this
 * backup, and its driver has a snapshot class: the one the PVC's annotation names, else the one the Backup's
 * annotation names for the driver, else the labelled/default/only class. With `snapshotMoveData` the snapshot's
 * data is then moved (DataUploads); without, the CSI snapshot is kept. Every "no" comes with the reason recorded in
 * the volume info (`csiSnapshot: <reason>;`); a CSI volume that cannot be snapshotted (no usable class) also with a
 * warning for the backup's results. Pure functions.
 */
import { Annotations, AsyncOperationIDPrefix, Labels, labelValue, parseDuration, type Backup } from '../../api/index.js';

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

/** Where the snapshot class of a moved claim came from (logged, so a user sees why a class was used). */
export type SnapshotClassSource = 'pvc-annotation' | 'backup-annotation' | 'default';

/** The Backup annotation naming the snapshot class for a driver: `velero.io/csi-volumesnapshot-class_<driver>`. */
export function backupSnapshotClassAnnotation(driver: string): string {
  return `${Annotations.VolumeSnapshotClassBackupPrefix}${driver.toLowerCase()}`;
}

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A class named by an annotation: found and of the claim's driver, or why it cannot be used. */
function namedClass(classes: readonly SnapshotClassLike[], name: string, driver: string): { cls: SnapshotClassLike } | { problem: string } {
  const cls = classes.find((c) => sameName(c.metadata.name, name));
  if (!cls) return { problem: `VolumeSnapshotClass ${name} does not exist` };
  if (!sameName(cls.driver, driver)) return { problem: `VolumeSnapshotClass ${name} is for the CSI driver ${cls.driver}, not ${driver}` };
  return { cls };
}

export type SnapshotClassChoice =
  | { cls: SnapshotClassLike; source: SnapshotClassSource }
  | { problem: string; annotation: string; on: 'PVC' | 'Backup' }
  | { none: true };

/**
 * The snapshot class for one claim, as Velero chooses it: the PVC annotation `velero.io/csi-volumesnapshot-class`,
 * else the Backup annotation `velero.io/csi-volumesnapshot-class_<driver>`, else pickSnapshotClass. A name that does
 * not exist or is of another driver is a problem (the claim is not moved) rather than a silent fall-back to the
 * default class: the user asked for that class.
 */
export function chooseSnapshotClass(opts: { backup: Backup; claimAnnotations?: Record<string, string> | undefined; driver: string; classes: readonly SnapshotClassLike[] }): SnapshotClassChoice {
  const onPvc = opts.claimAnnotations?.[Annotations.VolumeSnapshotClassPVC]?.trim();
  if (onPvc) {
    const r = namedClass(opts.classes, onPvc, opts.driver);
    return 'cls' in r ? { cls: r.cls, source: 'pvc-annotation' } : { problem: r.problem, annotation: Annotations.VolumeSnapshotClassPVC, on: 'PVC' };
  }
  const key = backupSnapshotClassAnnotation(opts.driver);
  const onBackup = opts.backup.metadata.annotations?.[key]?.trim();
  if (onBackup) {
    const r = namedClass(opts.classes, onBackup, opts.driver);
    return 'cls' in r ? { cls: r.cls, source: 'backup-annotation' } : { problem: r.problem, annotation: key, on: 'Backup' };
  }
  const cls = pickSnapshotClass(opts.classes, opts.driver);
  return cls ? { cls, source: 'default' } : { none: true };
}

/** What the decision knows of a PVC (read at backup time). */
export interface ClaimForDataMovement {
  namespace: string;
  name: string;
  uid: string;
  phase: string;
  volumeName: string;
  storageClassName: string;
  /** The PVC's annotations (the snapshot class override is one). */
  annotations?: Record<string, string> | undefined;
  /** The PVC's labels (Velero copies them onto the VolumeSnapshot). */
  labels?: Record<string, string> | undefined;
}

/** What a volume policy said about a claim's volume (first matching policy), when one matched. */
export interface VolumePolicyVerdict {
  action: 'skip' | 'fs-backup' | 'snapshot';
  /** Which policy matched, for the volume info and the log: `volume policy #2 of ConfigMap velero/policies`. */
  policy: string;
}

/** How a claim's volume is snapshotted: kept as a CSI snapshot, or moved into the backup repository. */
export type SnapshotMethod = 'csi-snapshot' | 'data-movement';

export interface VolumeSnapshotChoice {
  /** Snapshot the claim: how, with which driver and class, and where the class came from. */
  snapshot?: { method: SnapshotMethod; driver: string; snapshotClass: string; classSource: SnapshotClassSource };
  /** Not snapshotted: the volume info reason, `csiSnapshot: ...;`. */
  skippedReason?: string;
  /** Not snapshotted although it would have been (an unusable class, no class for a CSI volume): for the results. */
  warning?: string;
}

export interface DecideOptions {
  backup: Backup;
  claim: ClaimForDataMovement;
  /** UIDs of the claims fs-backup took in this backup (a PVB exists for them). */
  takenByFsBackup: ReadonlySet<string>;
  /** The CSI driver of the claim's volume (its PV's `spec.csi.driver`); '' when the volume is not a CSI volume. */
  driver: string;
  classes: readonly SnapshotClassLike[];
  /** The volume policy that matched the claim's volume, if any. */
  policy?: VolumePolicyVerdict | undefined;
}

const reason = (text: string) => `csiSnapshot: ${text};`;

/** Whether a backup moves snapshot data (DataUploads) rather than keeping CSI snapshots. */
export function wantsDataMovement(backup: Backup): boolean {
  return backup.spec?.snapshotMoveData === true;
}

/**
 * Whether a backup may take snapshots at all. `snapshotVolumes: false` turns them off, unless a volume policy
 * with the action `snapshot` asks for one (Velero's volume helper gives the policy the first word).
 */
export function mayTakeSnapshots(backup: Backup, policiesMaySnapshot = false): boolean {
  return backup.spec?.snapshotVolumes !== false || policiesMaySnapshot;
}

/**
 * Velero's order (its volume helper, then the CSI PVC action): a matching volume policy decides first (`snapshot`
 * takes the snapshot even with snapshotVolumes false; `skip` and `fs-backup` never snapshot); then a claim fs-backup
 * took is not snapshotted; then snapshotVolumes false; then the claim must be bound to a CSI volume whose driver has
 * a usable VolumeSnapshotClass. With snapshotMoveData the snapshot's data is moved (a DataUpload), else the CSI
 * snapshot itself is kept.
 */
export function decideVolumeSnapshot(opts: DecideOptions): VolumeSnapshotChoice {
  const { backup, claim, policy } = opts;
  if (policy && policy.action !== 'snapshot') {
    return { skippedReason: reason(`${policy.policy} has the action ${policy.action}`) };
  }
  if (claim.phase !== 'Bound' || !claim.volumeName) return { skippedReason: reason(`PVC ${claim.namespace}/${claim.name} is not bound`) };
  if (opts.takenByFsBackup.has(claim.uid)) return { skippedReason: reason('the volume is backed up by pod volume backup') };
  if (!policy && backup.spec?.snapshotVolumes === false) return { skippedReason: reason('the backup has snapshotVolumes set to false') };
  if (!opts.driver) return { skippedReason: reason('the volume is not a CSI volume') };
  const choice = chooseSnapshotClass({ backup, claimAnnotations: claim.annotations, driver: opts.driver, classes: opts.classes });
  const verb = wantsDataMovement(backup) ? 'moved' : 'snapshotted';
  if ('none' in choice) {
    const why = `no VolumeSnapshotClass for the CSI driver ${opts.driver}`;
    return { skippedReason: reason(why), warning: `PVC ${claim.namespace}/${claim.name} is not ${verb}: ${why}` };
  }
  if ('problem' in choice) {
    const where = choice.on === 'PVC' ? 'the PVC' : 'the backup';
    return {
      skippedReason: reason(`${choice.problem} (named by ${where}'s annotation ${choice.annotation})`),
      warning: `PVC ${claim.namespace}/${claim.name} is not ${verb}: ${choice.problem} (named by ${where}'s annotation ${choice.annotation})`,
    };
  }
  const method: SnapshotMethod = wantsDataMovement(backup) ? 'data-movement' : 'csi-snapshot';
  return { snapshot: { method, driver: opts.driver, snapshotClass: choice.cls.metadata.name, classSource: choice.source } };
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

/**
 * The backup's csiSnapshotTimeout as a Go duration (the server fills it in; 10m when absent). As in Velero it is the
 * DataUpload's `spec.operationTimeout`: how long the node agent waits for the snapshot to be ready. The server's own
 * item operation timeout is tracked from the backup, never from this field.
 */
export function csiSnapshotTimeoutOf(backup: Backup): string {
  return backup.spec?.csiSnapshotTimeout || '10m0s';
}

/** A timeout given as a Go duration, in ms; `fallbackMs` when it is not a positive duration. */
export function timeoutMsOr(text: string, fallbackMs: number): number {
  try {
    const ms = parseDuration(text);
    if (ms > 0) return ms;
  } catch {
    /* fall through */
  }
  return fallbackMs;
}

/** Whether an object was made by a backup's data movement (the VolumeSnapshots it creates carry the backup's UID). */
export function madeByBackup(labels: Record<string, string> | undefined, backupUid: string): boolean {
  return Boolean(backupUid) && labels?.[Labels.BackupUID] === backupUid;
}
