/**
 * What the restore calls right after it created (or found, after a server restart) a claim: when the backup moved
 * the claim's data and the claim was rewritten for it (it carries the `velero.io/dynamic-pv-restore` selector), the
 * repository of (location, backup-time namespace) is ensured Ready and one DataDownload is created. Creation is
 * idempotent: a DataDownload of this restore with the same operation ID is reused. Counts what it started so the
 * restore knows whether to wait.
 */
import { Kinds, Labels, parseDataDownload, type DataDownload, type Restore } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import type { StoredBackupVolumeInfo } from '../../api/volume-info.js';
import { dataDownloadOperationId, dynamicPvRestoreValueOf, movedVolumeFor } from './restore-decision.js';
import { dataDownloadFor } from './restore-objects.js';
import { ensuredOncePerLocation } from '../repository/ensure.js';

export interface PvcCreatedOptions {
  /** The claim as it is in the backup (backup-time namespace, old UID). */
  pvcFromBackup: UnstructuredObject;
  /** The claim as it is in the cluster now. */
  pvc: UnstructuredObject;
}

/** The restorer's view: errors to report for this claim (one line each). */
export interface DataDownloadHook {
  afterPvcCreated(opts: PvcCreatedOptions): Promise<string[]>;
}

export interface DataDownloadCreatorOptions {
  kube: Kube;
  restore: Restore;
  /** The backup's storage location. */
  backupStorageLocation: string;
  volumeInfos: readonly StoredBackupVolumeInfo[];
  log: Logger;
  /** Ensures the repository of (location, volume namespace) is Ready; throws with the reason otherwise. */
  ensureRepository: (bsl: string, volumeNamespace: string) => Promise<void>;
}

export class DataDownloadCreator implements DataDownloadHook {
  readonly started: DataDownload[] = [];
  private readonly client;
  private readonly ensureRepository;

  constructor(private readonly opts: DataDownloadCreatorOptions) {
    this.client = customClient<DataDownload>(opts.kube, Kinds.DataDownload, parseDataDownload);
    this.ensureRepository = ensuredOncePerLocation(opts.ensureRepository);
  }


  async afterPvcCreated(opts: PvcCreatedOptions): Promise<string[]> {
    const { restore, log } = this.opts;
    if (!dynamicPvRestoreValueOf(opts.pvc)) return [];
    const moved = movedVolumeFor(this.opts.volumeInfos, opts.pvcFromBackup.metadata.namespace ?? '', opts.pvcFromBackup.metadata.name);
    if (!moved) return [];
    const target = { name: opts.pvc.metadata.name, namespace: opts.pvc.metadata.namespace ?? '' };
    const what = `persistent volume claim ${target.namespace}/${target.name}`;
    const pvcUid = opts.pvcFromBackup.metadata.uid ?? '';
    const namespace = restore.metadata.namespace ?? '';
    const operationID = dataDownloadOperationId(restore.metadata.uid ?? '', pvcUid);
    try {
      const existing = await this.client.list(namespace, `${Labels.RestoreUID}=${restore.metadata.uid ?? ''},${Labels.AsyncOperationID}=${operationID}`);
      const found = existing.find((d) => d.spec.targetVolume.pvc === target.name && d.spec.targetVolume.namespace === target.namespace);
      if (found) {
        this.started.push(found);
        return [];
      }
    } catch (err) {
      return [`could not look for the data download of ${what}: ${(err as Error).message}`];
    }
    try {
      await this.ensureRepository(this.opts.backupStorageLocation, moved.pvcNamespace);
    } catch (err) {
      return [`data download of ${what} not started: ${(err as Error).message}`];
    }
    try {
      const created = await this.client.create(
        dataDownloadFor({ restore, backupStorageLocation: this.opts.backupStorageLocation, moved, targetPvc: target, pvcUidFromBackup: pvcUid }),
      );
      log.info(`Created DataDownload ${created.metadata?.name ?? ''} for ${what} (snapshot ${moved.snapshotHandle})`);
      this.started.push(created);
      return [];
    } catch (err) {
      return [`could not create the data download of ${what}: ${(err as Error).message}`];
    }
  }
}
