/**
 * One run of a backup, from an InProgress Backup to its files in the storage location: back up the items into a
 * temporary archive, then put everything with Velero's names (BackupStore.putBackup keeps Velero's order). The
 * outcome says which final phase the controller writes; the run itself never writes the Backup object except
 * through the callbacks it is given.
 */
import { createReadStream } from 'node:fs';
import { ApiVersionV1, BackupPhase, OperationPhase, type Backup } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import type { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import { BackupArchiveWriter } from '../archive/writer.js';
import { isNotFound } from '../../plugins/object-store/index.js';
import type { BackupStore } from '../../storage/backup-store.js';
import type { ApiReader } from './api-reader.js';
import { backupItems, type BackupItemsResult, type BackupProgressUpdate } from './backupper.js';
import type { PodExecutor } from '../../kube/pod-exec.js';
import { runExecHooks } from '../hooks/hook-runner.js';
import { pendingPod, type PendingPostHooks } from '../hooks/pending-post-hooks.js';
import type { PodVolumeBackupCreator } from '../podvolume/backup-creator.js';
import { backupOperationFor } from '../podvolume/backup-tracking.js';
import type { VolumeSnapshotCreator } from '../datamover/backup-creator.js';
import { dataUploadOperationFor } from '../datamover/backup-tracking.js';
import { csiSnapshotOperation } from '../csi/snapshot-objects.js';
import type { IncludeExcludePolicy } from './volume-policies.js';

export interface RunBackupOptions {
  kube: Kube;
  api: ApiReader;
  backup: Backup;
  store: BackupStore;
  registry: ItemActionRegistry;
  /** The backup's own log (uploaded as `<name>-logs.gz`). */
  log: Logger;
  logText: () => string;
  onProgress?: (p: BackupProgressUpdate) => void;
  /** Called once the items are in the archive, before upload: the controller records Finalizing and the counts. */
  onFinalizing?: (s: FinalizingStatus) => Promise<Backup>;
  signal?: AbortSignal;
  tmpDir?: string;
  now?: () => Date;
  /** Creates PodVolumeBackups for pods' volumes (fs-backup). */
  podVolumes?: PodVolumeBackupCreator;
  /** Takes CSI snapshots of PVCs (kept, or moved by DataUploads). */
  volumeSnapshots?: VolumeSnapshotCreator;
  /** The resource policies' scoped filters, added to the spec's (which take precedence). */
  includeExcludePolicy?: IncludeExcludePolicy;
  /** Runs backup hooks in pods. */
  exec?: PodExecutor;
  /** Records the pods whose post hooks wait for their volumes (see ../hooks/pending-post-hooks.ts). */
  onPendingPostHooks?: (pending: readonly PendingPostHooks[]) => Promise<void>;
  /** Post hooks an earlier, unfinished run of this backup left waiting: run first. */
  leftoverPostHooks?: readonly PendingPostHooks[];
}

export type WaitingPhase = typeof BackupPhase.WaitingForPluginOperations | typeof BackupPhase.WaitingForPluginOperationsPartiallyFailed;

export interface FinalizingStatus {
  /** Finalizing*, or WaitingForPluginOperations* when PodVolumeBackups are still to be waited for. */
  phase: typeof BackupPhase.Finalizing | typeof BackupPhase.FinalizingPartiallyFailed | WaitingPhase;
  warnings: number;
  errors: number;
  progress: BackupProgressUpdate;
  /** How many PodVolumeBackups and DataUploads the backup waits for (status.backupItemOperationsAttempted). */
  itemOperations: number;
  /** Hooks run so far (status.hookStatus). */
  hooks: { attempted: number; failed: number };
  /** Pods whose post hooks wait for their volumes. */
  pendingPostHooks: PendingPostHooks[];
}

export interface RunBackupOutcome {
  /** WaitingForPluginOperations*: the items are stored; PVBs, DataUploads, CSI snapshots and plugin operations are tracked by the operations controller. */
  phase: typeof BackupPhase.Completed | typeof BackupPhase.PartiallyFailed | WaitingPhase;
  itemOperations: number;
  warnings: number;
  errors: number;
  progress: BackupProgressUpdate;
  archiveBytes: number;
  hooks: { attempted: number; failed: number };
}

export async function runBackup(opts: RunBackupOptions): Promise<RunBackupOutcome> {
  const name = opts.backup.metadata?.name ?? '';
  const archive = await BackupArchiveWriter.create({ ...(opts.tmpDir ? { tmpDir: opts.tmpDir } : {}), ...(opts.now ? { now: opts.now } : {}) });
  try {
    opts.log.info({ storageLocation: opts.backup.spec?.storageLocation }, 'Starting backup');
    const items = await backupItems({
      kube: opts.kube,
      api: opts.api,
      backup: opts.backup,
      registry: opts.registry,
      archive,
      log: opts.log,
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.podVolumes ? { podVolumes: opts.podVolumes } : {}),
      ...(opts.volumeSnapshots ? { volumeSnapshots: opts.volumeSnapshots } : {}),
      ...(opts.includeExcludePolicy ? { includeExcludePolicy: opts.includeExcludePolicy } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      ...(opts.exec ? { exec: opts.exec } : {}),
      ...(opts.onPendingPostHooks ? { onPendingPostHooks: opts.onPendingPostHooks } : {}),
      ...(opts.leftoverPostHooks ? { leftoverPostHooks: opts.leftoverPostHooks } : {}),
    });
    try {
      return await finishAndUpload(opts, archive, items, name);
    } catch (err) {
      // The backup will not reach the operations controller: the pods waiting for their post hooks get them now.
      if (items.pendingPostHooks.length && opts.exec) {
        opts.log.warn('The backup failed before its volumes were backed up; running the waiting post hooks now');
        for (const entry of items.pendingPostHooks) {
          await runExecHooks({ pod: pendingPod(entry), phase: 'post', hooks: entry.hooks, exec: opts.exec, log: opts.log }).catch(() => undefined);
        }
        await opts.onPendingPostHooks?.([]).catch(() => undefined);
      }
      throw err;
    }
  } finally {
    await archive.dispose();
  }
}

async function finishAndUpload(opts: RunBackupOptions, archive: BackupArchiveWriter, items: BackupItemsResult, name: string): Promise<RunBackupOutcome> {
  const finished = await archive.finish();
  const warnings = items.results.warningCount;
  const errors = items.results.errorCount;
  const progress = { totalItems: items.totalItems, itemsBackedUp: items.itemsBackedUp };
  const pvbs = items.podVolumeBackups;
  const dus = items.dataUploads;
  const snaps = items.csiSnapshots;
  const pluginOps = items.pluginOperations;
  const operationCount = pvbs.length + dus.length + snaps.length + pluginOps.length;
  const waiting = operationCount > 0;
  const phase = waiting
    ? errors > 0
      ? BackupPhase.WaitingForPluginOperationsPartiallyFailed
      : BackupPhase.WaitingForPluginOperations
    : errors > 0
      ? BackupPhase.FinalizingPartiallyFailed
      : BackupPhase.Finalizing;
  opts.log.info(
    {
      phase,
      warnings,
      errors,
      itemsBackedUp: items.itemsBackedUp,
      archiveBytes: finished.size,
      podVolumeBackups: pvbs.length,
      ...(dus.length ? { dataUploads: dus.length } : {}),
      ...(snaps.length ? { csiSnapshots: snaps.length } : {}),
      ...(pluginOps.length ? { pluginOperations: pluginOps.length } : {}),
    },
    'Backup items done; uploading',
  );
  const metadata = opts.onFinalizing
    ? await opts.onFinalizing({ phase, warnings, errors, progress, itemOperations: operationCount, hooks: items.hooks, pendingPostHooks: items.pendingPostHooks })
    : opts.backup;
  const now = opts.now ?? (() => new Date());

  await putOrExplain(opts.store, opts.backup.spec?.storageLocation ?? '', () => opts.store.putBackup({
    name,
    metadata: withTypeMeta(metadata),
    contents: createReadStream(finished.path),
    contentsLength: finished.size,
    log: opts.logText(),
    files: {
      results: items.results.toJSON(),
      resourceList: items.resourceList,
      volumeInfo: items.volumeInfo.toJSON(),
      // Written now with the PVBs, DataUploads, CSI snapshots and plugin operations as they are; the operations
      // controller keeps the plugin operations' progress here and writes them all again once they are done.
      itemOperations: [
        ...pvbs.map((pvb) => backupOperationFor({ backup: metadata, pvb, now: now() })),
        ...dus.map((du) => dataUploadOperationFor({ backup: metadata, du, now: now() })),
        ...snaps.map((ref) => csiSnapshotOperation({ backup: metadata, state: { ref }, phase: OperationPhase.New, now: now() })),
        ...pluginOps,
      ],
      podVolumeBackups: pvbs,
      volumeSnapshots: [],
      csiVolumeSnapshotClasses: [],
    },
  }));
  return {
    phase: waiting ? (phase as WaitingPhase) : errors > 0 ? BackupPhase.PartiallyFailed : BackupPhase.Completed,
    itemOperations: operationCount,
    warnings,
    errors,
    progress,
    archiveBytes: finished.size,
    hooks: items.hooks,
  };
}

/** A failure to write the location, said as such (it becomes the backup's failureReason). */
export class BackupStorageError extends Error {}

async function putOrExplain(store: BackupStore, location: string, put: () => Promise<void>): Promise<void> {
  try {
    await put();
  } catch (err) {
    // A put answered "not found" means the bucket (or filesystem root) itself is missing.
    const why = isNotFound(err) ? `the bucket or directory does not exist (${(err as Error).message})` : (err as Error).message;
    throw new BackupStorageError(`cannot upload the backup to storage location ${location} (${store.description}): ${why}`);
  }
}

/** velero-backup.json must carry apiVersion/kind (Velero decodes it with the universal decoder). */
export function withTypeMeta(backup: Backup): Backup {
  return { ...backup, apiVersion: ApiVersionV1, kind: 'Backup' };
}
