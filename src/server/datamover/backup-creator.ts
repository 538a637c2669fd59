/**
 * Takes the CSI snapshots of one backup run. The backupper hands it every PVC it backs up; once all items are done
 * (so the PVCs fs-backup took in this backup are known) it decides per claim (./backup-decision.ts) and creates the
 * VolumeSnapshot. With snapshot data movement it first ensures the BackupRepository of (location, PVC namespace) is
 * Ready and then creates a DataUpload for the snapshot; without, the snapshot itself is what the backup keeps, and
 * the backup waits for it to be ready (src/server/csi/). Idempotent across runs of the same backup: a DataUpload or
 * VolumeSnapshot that exists for (backup uid, PVC) from an earlier run is reused, so a backup run again after a
 * server restart never makes a second one.
 */
import { Kinds, Labels, parseDataUpload, statusTime, type Backup, type DataUpload } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { ensureBackupRepository } from '../repository/ensure.js';
import type { BackupVolumeInfo } from '../../api/volume-info.js';
import { decideVolumeSnapshot, mayTakeSnapshots, wantsDataMovement, type ClaimForDataMovement, type SnapshotClassLike, type VolumePolicyVerdict } from './backup-decision.js';
import { dataUploadFor, volumeSnapshotFor } from './backup-objects.js';
import { createVolumeSnapshot, listSnapshotClasses, listVolumeSnapshots } from './backup-snapshots.js';
import { csiSnapshotVolumeInfo, type CsiSnapshotRef } from '../csi/snapshot-objects.js';
import { initialDataMovementEntry } from './backup-tracking.js';
import { listDataUploads } from './backup-cleanup.js';

/** The parts of a PVC the creator reads (the backed-up item). */
export interface PersistentVolumeClaimItem {
  metadata: { name: string; namespace?: string; uid?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: { volumeName?: string; storageClassName?: string };
  status?: { phase?: string };
}

export interface VolumeSnapshotCreatorOptions {
  kube: Kube;
  /** The install namespace (DataUploads and BackupRepositories live there). */
  namespace: string;
  backup: Backup;
  /** How long to wait for a BackupRepository to become Ready (default 5 minutes). */
  repositoryTimeoutMs?: number;
  signal?: AbortSignal;
  /** The volume policy verdict for a claim's volume (undefined: no policy matched, or none configured). */
  policyFor?: (claim: ClaimForDataMovement, pv: PersistentVolumeForDecision | undefined) => VolumePolicyVerdict | undefined;
  /** Whether any volume policy can ask for a snapshot (then claims are considered even with snapshotVolumes false). */
  policiesMaySnapshot?: boolean;
}

/** The parts of a claim's PV the decision and the volume policies read. */
export interface PersistentVolumeForDecision {
  metadata: { name?: string; labels?: Record<string, string> };
  spec?: {
    csi?: { driver?: string; volumeAttributes?: Record<string, string> };
    nfs?: { server?: string; path?: string };
    capacity?: Record<string, string>;
    storageClassName?: string;
    [key: string]: unknown;
  };
}

export interface DataUploadsOutcome {
  /** Every DataUpload of this backup (created now or found from an earlier run). */
  dataUploads: DataUpload[];
  /** The CSI snapshots this backup keeps (no data movement), created now or found from an earlier run. */
  csiSnapshots: CsiSnapshotRef[];
  /** Volumes not moved: PV name and the `csiSnapshot: ...;` reason. */
  skipped: { pvName: string; reason: string }[];
  /** Volume info entries of the snapshotted volumes (by PV name). */
  volumeInfo: BackupVolumeInfo[];
  /** Problems that make the backup PartiallyFailed, by PVC namespace. */
  errors: { namespace: string; message: string }[];
  /** Claims not snapshotted although they would have been (no usable snapshot class), by PVC namespace. */
  warnings: { namespace: string; message: string }[];
}

export class VolumeSnapshotCreator {
  private readonly claims: ClaimForDataMovement[] = [];
  private readonly dus;

  constructor(private readonly opts: VolumeSnapshotCreatorOptions) {
    this.dus = customClient<DataUpload>(opts.kube, Kinds.DataUpload, parseDataUpload);
  }

  /**
   * Always: every backed-up claim gets a decision, so a claim not snapshotted because of snapshotVolumes false says
   * so in the volume info (the decision gives that reason without reading anything).
   */
  get enabled(): boolean {
    return true;
  }

  /** Whether this backup may take snapshots at all (snapshotVolumes not false, or a volume policy asks for some). */
  get maySnapshot(): boolean {
    return mayTakeSnapshots(this.opts.backup, this.opts.policiesMaySnapshot ?? false);
  }

  /** Remembers a backed-up PVC; the decision waits until every pod (and so every PVB) of the backup is known. */
  consider(pvc: PersistentVolumeClaimItem): void {
    if (!this.enabled) return;
    this.claims.push({
      namespace: pvc.metadata.namespace ?? '',
      name: pvc.metadata.name,
      uid: pvc.metadata.uid ?? '',
      phase: pvc.status?.phase ?? '',
      volumeName: pvc.spec?.volumeName ?? '',
      storageClassName: pvc.spec?.storageClassName ?? '',
      annotations: pvc.metadata.annotations,
      labels: pvc.metadata.labels,
    });
  }

  /** Decides for every remembered PVC and creates what is needed. `takenByFsBackup` holds PVC UIDs with a PVB. */
  async createAll(opts: { takenByFsBackup: ReadonlySet<string>; log: Logger }): Promise<DataUploadsOutcome> {
    const out: DataUploadsOutcome = { dataUploads: [], csiSnapshots: [], skipped: [], volumeInfo: [], errors: [], warnings: [] };
    if (!this.claims.length) return out;
    const backup = this.opts.backup;
    const uid = backup.metadata.uid ?? '';
    // With no snapshot possible the decision needs neither classes nor volumes.
    const classes: SnapshotClassLike[] = this.maySnapshot ? await listSnapshotClasses(this.opts.kube) : [];
    const existing = new Map((wantsDataMovement(backup) && this.maySnapshot ? await listDataUploads(this.opts.kube, this.opts.namespace, uid) : []).map((d) => [d.metadata.labels?.[Labels.PVCUID] ?? '', d]));
    const repositories = new Map<string, Promise<void>>();

    for (const claim of this.claims) {
      const where = `${claim.namespace}/${claim.name}`;
      try {
        const pv = claim.volumeName && this.maySnapshot ? await this.persistentVolume(claim.volumeName) : undefined;
        const driver = pv?.spec?.csi?.driver ?? '';
        const policy = this.opts.policyFor?.(claim, pv);
        const choice = decideVolumeSnapshot({ backup, claim, takenByFsBackup: opts.takenByFsBackup, driver, classes, policy });
        if (!choice.snapshot) {
          if (claim.volumeName && choice.skippedReason) out.skipped.push({ pvName: claim.volumeName, reason: choice.skippedReason });
          if (choice.warning) out.warnings.push({ namespace: claim.namespace, message: choice.warning });
          opts.log.info({ pvc: where, reason: choice.skippedReason }, 'PVC is not snapshotted');
          continue;
        }
        const { method, snapshotClass, classSource } = choice.snapshot;
        if (method === 'csi-snapshot') {
          const vs = await this.sourceSnapshot(claim, snapshotClass, opts.log);
          const ref: CsiSnapshotRef = {
            namespace: claim.namespace,
            name: vs.name,
            pvcName: claim.name,
            pvcUid: claim.uid,
            pvName: claim.volumeName,
            driver,
            snapshotClass,
            created: vs.created,
          };
          out.csiSnapshots.push(ref);
          out.volumeInfo.push(csiSnapshotVolumeInfo({ ref }));
          opts.log.info(
            { pvc: where, volumeSnapshot: `${claim.namespace}/${vs.name}`, snapshotClass, snapshotClassFrom: classSource, ...(policy ? { volumePolicy: policy.policy } : {}) },
            'CSI snapshot taken; the backup waits for it to be ready',
          );
          continue;
        }
        let du = existing.get(claim.uid);
        if (du) {
          opts.log.info({ pvc: where, dataUpload: du.metadata.name }, 'DataUpload exists from an earlier run of this backup; reusing it');
        } else {
          let repo = repositories.get(claim.namespace);
          if (!repo) {
            repo = this.ensureRepository(claim.namespace, opts.log);
            repositories.set(claim.namespace, repo);
          }
          await repo;
          const snapshot = await this.sourceSnapshot(claim, snapshotClass, opts.log);
          du = await this.dus.create(dataUploadFor({ backup, claim, volumeSnapshot: snapshot.name, snapshotClass, driver }));
          existing.set(claim.uid, du);
          opts.log.info(
            { pvc: where, dataUpload: du.metadata.name, volumeSnapshot: snapshot.name, snapshotClass, snapshotClassFrom: classSource, ...(policy ? { volumePolicy: policy.policy } : {}) },
            'Created DataUpload',
          );
        }
        out.dataUploads.push(du);
        out.volumeInfo.push(initialDataMovementEntry({ du, pvName: claim.volumeName }));
      } catch (err) {
        if (this.opts.signal?.aborted) throw err;
        out.errors.push({ namespace: claim.namespace, message: `error taking the snapshot of PVC ${where}: ${(err as Error).message}` });
      }
    }
    return out;
  }

  /** The VolumeSnapshot of this backup for the claim: found from an earlier run, or created now. */
  private async sourceSnapshot(claim: ClaimForDataMovement, snapshotClass: string, log: Logger): Promise<{ name: string; created: string }> {
    const uid = this.opts.backup.metadata.uid ?? '';
    const found = (await listVolumeSnapshots(this.opts.kube, claim.namespace, `${Labels.BackupUID}=${uid}`)).find(
      (s) => s.spec?.source?.persistentVolumeClaimName === claim.name && !s.metadata.deletionTimestamp,
    );
    if (found?.metadata.name) {
      log.info({ pvc: `${claim.namespace}/${claim.name}`, volumeSnapshot: found.metadata.name }, 'VolumeSnapshot exists from an earlier run of this backup; reusing it');
      return { name: found.metadata.name, created: createdOf(found) };
    }
    const created = await createVolumeSnapshot(this.opts.kube, volumeSnapshotFor({ backup: this.opts.backup, claim, snapshotClass }));
    return { name: created.metadata.name ?? '', created: createdOf(created) };
  }

  /** The claim's PV (undefined when it cannot be read: then the volume is not known to be a CSI volume). */
  private async persistentVolume(pvName: string): Promise<PersistentVolumeForDecision | undefined> {
    try {
      return (await this.opts.kube.core.readPersistentVolume({ name: pvName })) as PersistentVolumeForDecision;
    } catch {
      return undefined;
    }
  }

  private ensureRepository(volumeNamespace: string, log: Logger): Promise<void> {
    return ensureBackupRepository(this.opts, volumeNamespace, log);
  }
}

function createdOf(vs: { metadata: { creationTimestamp?: unknown } }): string {
  const t = vs.metadata.creationTimestamp;
  const d = t instanceof Date ? t : typeof t === 'string' ? new Date(t) : new Date();
  return statusTime(Number.isNaN(d.getTime()) ? new Date() : d);
}
