/**
 * Creates the DataUploads of one backup run (the contract of issue 7). The backupper hands it every PVC it backs up;
 * once all items are done (so the PVCs fs-backup took in this backup are known) it decides per claim, ensures the
 * BackupRepository of (location, PVC namespace) is Ready, creates the source VolumeSnapshot and then the DataUpload.
 * Idempotent across runs of the same backup: a DataUpload (or VolumeSnapshot) that exists for (backup uid, PVC)
 * from an earlier run is reused, so a backup run again after a server restart never makes a second one.
 */
import { Kinds, Labels, parseDataUpload, type Backup, type DataUpload } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { ensureRepository } from '../repository/ensure.js';
import type { BackupVolumeInfo } from '../../api/volume-info.js';
import { decideDataMovement, wantsDataMovement, type ClaimForDataMovement, type SnapshotClassLike } from './backup-decision.js';
import { dataUploadFor, volumeSnapshotFor } from './backup-objects.js';
import { createVolumeSnapshot, listSnapshotClasses, listVolumeSnapshots, storageClassProvisioner } from './backup-snapshots.js';
import { initialDataMovementEntry } from './backup-tracking.js';
import { listDataUploads } from './backup-cleanup.js';

/** The parts of a PVC the creator reads (the backed-up item). */
export interface PersistentVolumeClaimItem {
  metadata: { name: string; namespace?: string; uid?: string; annotations?: Record<string, string> };
  spec?: { volumeName?: string; storageClassName?: string };
  status?: { phase?: string };
}

export interface DataUploadCreatorOptions {
  kube: Kube;
  /** The install namespace (DataUploads and BackupRepositories live there). */
  namespace: string;
  backup: Backup;
  /** How long to wait for a BackupRepository to become Ready (default 5 minutes). */
  repositoryTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface DataUploadsOutcome {
  /** Every DataUpload of this backup (created now or found from an earlier run). */
  dataUploads: DataUpload[];
  /** Volumes not moved: PV name and the `csiSnapshot: ...;` reason. */
  skipped: { pvName: string; reason: string }[];
  /** Volume info entries of the moved volumes (by PV name). */
  volumeInfo: BackupVolumeInfo[];
  /** Problems that make the backup PartiallyFailed, by PVC namespace. */
  errors: { namespace: string; message: string }[];
  /** Claims not moved although an annotation asked for a snapshot class (it cannot be used), by PVC namespace. */
  warnings: { namespace: string; message: string }[];
}

export class DataUploadCreator {
  private readonly claims: ClaimForDataMovement[] = [];
  private readonly dus;

  constructor(private readonly opts: DataUploadCreatorOptions) {
    this.dus = customClient<DataUpload>(opts.kube, Kinds.DataUpload, parseDataUpload);
  }

  /** Whether this backup moves snapshot data at all (otherwise nothing is collected and nothing changes). */
  get enabled(): boolean {
    return wantsDataMovement(this.opts.backup);
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
    });
  }

  /** Decides for every remembered PVC and creates what is needed. `takenByFsBackup` holds PVC UIDs with a PVB. */
  async createAll(opts: { takenByFsBackup: ReadonlySet<string>; log: Logger }): Promise<DataUploadsOutcome> {
    const out: DataUploadsOutcome = { dataUploads: [], skipped: [], volumeInfo: [], errors: [], warnings: [] };
    if (!this.claims.length) return out;
    const backup = this.opts.backup;
    const uid = backup.metadata.uid ?? '';
    const classes: SnapshotClassLike[] = await listSnapshotClasses(this.opts.kube);
    const existing = new Map((await listDataUploads(this.opts.kube, this.opts.namespace, uid)).map((d) => [d.metadata.labels?.[Labels.PVCUID] ?? '', d]));
    const provisioners = new Map<string, string>();
    const repositories = new Map<string, Promise<void>>();

    for (const claim of this.claims) {
      const where = `${claim.namespace}/${claim.name}`;
      try {
        let driver = provisioners.get(claim.storageClassName);
        if (driver === undefined) {
          driver = await storageClassProvisioner(this.opts.kube, claim.storageClassName);
          provisioners.set(claim.storageClassName, driver);
        }
        if (!driver && claim.volumeName) driver = await this.csiDriverOfVolume(claim.volumeName);
        const choice = decideDataMovement({ backup, claim, takenByFsBackup: opts.takenByFsBackup, driver, classes });
        if (!choice.move) {
          if (claim.volumeName && choice.skippedReason) out.skipped.push({ pvName: claim.volumeName, reason: choice.skippedReason });
          if (choice.warning) out.warnings.push({ namespace: claim.namespace, message: choice.warning });
          opts.log.info({ pvc: where, reason: choice.skippedReason }, 'PVC data is not moved by snapshot data movement');
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
          const snapshot = await this.sourceSnapshot(claim, choice.move.snapshotClass, opts.log);
          du = await this.dus.create(dataUploadFor({ backup, claim, volumeSnapshot: snapshot, snapshotClass: choice.move.snapshotClass, driver: choice.move.driver }));
          existing.set(claim.uid, du);
          opts.log.info(
            { pvc: where, dataUpload: du.metadata.name, volumeSnapshot: snapshot, snapshotClass: choice.move.snapshotClass, snapshotClassFrom: choice.move.classSource },
            'Created DataUpload',
          );
        }
        out.dataUploads.push(du);
        out.volumeInfo.push(initialDataMovementEntry({ du, pvName: claim.volumeName }));
      } catch (err) {
        if (this.opts.signal?.aborted) throw err;
        out.errors.push({ namespace: claim.namespace, message: `error taking the snapshot of PVC ${where} for data movement: ${(err as Error).message}` });
      }
    }
    return out;
  }

  /** The VolumeSnapshot of this backup for the claim: found from an earlier run, or created now. */
  private async sourceSnapshot(claim: ClaimForDataMovement, snapshotClass: string, log: Logger): Promise<string> {
    const uid = this.opts.backup.metadata.uid ?? '';
    const found = (await listVolumeSnapshots(this.opts.kube, claim.namespace, `${Labels.BackupUID}=${uid}`)).find(
      (s) => s.spec?.source?.persistentVolumeClaimName === claim.name && !s.metadata.deletionTimestamp,
    );
    if (found?.metadata.name) {
      log.info({ pvc: `${claim.namespace}/${claim.name}`, volumeSnapshot: found.metadata.name }, 'VolumeSnapshot exists from an earlier run of this backup; reusing it');
      return found.metadata.name;
    }
    const created = await createVolumeSnapshot(this.opts.kube, volumeSnapshotFor({ backup: this.opts.backup, claim, snapshotClass }));
    return created.metadata.name ?? '';
  }

  private async csiDriverOfVolume(pvName: string): Promise<string> {
    try {
      const pv = await this.opts.kube.core.readPersistentVolume({ name: pvName });
      return pv.spec?.csi?.driver ?? '';
    } catch {
      return '';
    }
  }

  private async ensureRepository(volumeNamespace: string, log: Logger): Promise<void> {
    const r = await ensureRepository({
      kube: this.opts.kube,
      namespace: this.opts.namespace,
      bsl: this.opts.backup.spec?.storageLocation ?? '',
      volumeNamespace,
      ...(this.opts.repositoryTimeoutMs ? { timeoutMs: this.opts.repositoryTimeoutMs } : {}),
      ...(this.opts.signal ? { signal: this.opts.signal } : {}),
    });
    log.info({ repository: r.repository.metadata.name, volumeNamespace, created: r.created }, 'Backup repository is ready');
  }
}
