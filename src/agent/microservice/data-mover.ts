/**
 * `cairn data-mover backup|restore` behind the command: the snapshot data mover's in-pod half (Velero's data mover micro service design). It follows
 * the DataUpload/DataDownload, moves the data of the volume the exposer mounted (a directory, or a block device) to or
 * from the repository of (spec.backupStorageLocation, spec.sourceNamespace), emits the protocol Events on the CR and
 * returns the termination message. Like the pod-volume commands it never writes the CR's status.
 */
import { Labels } from '../../api/constants.js';
import { Kinds, parseDataDownload, parseDataUpload, type DataUpload } from '../../api/index.js';
import { backupBlockVolume, checkBlockVolume } from './block-volume.js';
import { findParentSnapshot, parallelFilesDownloadSetting, SnapshotTags } from './pod-volume.js';
import { backupResultMessage, restoreResultMessage, type VolumeMode } from './protocol.js';
import { logRestoreSource, restoreBlockFromSource, restoreDirectory, writeSparseFilesSetting } from './restore-source.js';
import type { DataPathWork, RunDataPathResult } from './run.js';
import { backupDirectory, checkFilesystemVolume, isEmptyDirectory, openTaskRepository, openTaskRestoreSource, runTaskOn, type DataMoverTaskOptions } from './task.js';

/** Velero's requester tag value for data-mover snapshots. */
export const DATA_MOVER_REQUESTER = 'snapshot-data-upload-download';
/** Our own tag: Filesystem and Block snapshots of one PVC are never each other's parent. */
export const VOLUME_MODE_TAG = 'volume-mode';

/** `<sourceNamespace>/<sourcePVC>`: the identity of a data-mover source, the same across snapshots and pods. */
export function dataUploadRealSource(du: DataUpload): string {
  return `${du.spec.sourceNamespace}/${du.spec.sourcePVC}`;
}

/** The tags of a data-mover snapshot: the async operation ID (as Velero) plus ours to find the parent by. */
export function dataUploadTags(du: DataUpload, volumeMode: VolumeMode): Record<string, string> {
  const operationID = du.metadata?.labels?.[Labels.AsyncOperationID];
  const backupName = du.metadata?.labels?.[Labels.BackupName];
  return {
    ...(operationID ? { [Labels.AsyncOperationID]: operationID } : {}),
    ...(backupName ? { backup: backupName } : {}),
    [SnapshotTags.Requester]: DATA_MOVER_REQUESTER,
    [SnapshotTags.Uploader]: 'kopia',
    [SnapshotTags.RealSource]: dataUploadRealSource(du),
    [VOLUME_MODE_TAG]: volumeMode,
  };
}

function checkVolume(path: string, mode: VolumeMode): void {
  if (mode === 'Block') checkBlockVolume(path);
  else checkFilesystemVolume(path);
}

export async function runDataUpload(opts: DataMoverTaskOptions): Promise<RunDataPathResult> {
  const mode = opts.volumeMode ?? 'Filesystem';
  return runTaskOn(opts, 'DU', { kind: Kinds.DataUpload, parse: parseDataUpload, logLabel: 'DataUpload' }, async (du): Promise<DataPathWork> => {
    checkVolume(opts.volumePath, mode);
    const { repository, location } = await openTaskRepository(opts, { bslName: du.spec.backupStorageLocation, volumeNamespace: du.spec.sourceNamespace });
    const source = dataUploadRealSource(du);
    const tags = dataUploadTags(du, mode);
    opts.logger.info({ DU: opts.name, repository: location, source, volumeMode: mode }, 'repository opened');
    return {
      async run({ signal, onProgress }) {
        const parent = await findParentSnapshot(repository.snapshots, source, { [SnapshotTags.Requester]: DATA_MOVER_REQUESTER, [VOLUME_MODE_TAG]: mode });
        opts.logger.info({ DU: opts.name, parent: parent ?? null }, parent ? 'incremental backup against the previous snapshot' : 'full backup (no previous snapshot)');
        if (mode === 'Block') {
          const r = await backupBlockVolume({ repository, devicePath: opts.volumePath, parent, tags, description: source, signal, onProgress });
          opts.logger.info({ DU: opts.name, snapshotID: r.snapshotId, bytes: r.bytes, newBytes: r.newBytes, durationMs: r.durationMs }, 'block volume snapshot written');
          onProgress({ totalBytes: r.bytes, doneBytes: r.bytes });
          return backupResultMessage({ snapshotID: r.snapshotId, emptySnapshot: false, volumePath: opts.volumePath, totalBytes: r.bytes, volumeMode: mode });
        }
        if (isEmptyDirectory(opts.volumePath)) {
          opts.logger.info({ DU: opts.name }, 'volume is empty; no snapshot taken');
          return backupResultMessage({ snapshotID: '', emptySnapshot: true, volumePath: opts.volumePath, totalBytes: 0, volumeMode: mode });
        }
        const cache = opts.cacheDir ? { dir: opts.cacheDir, key: source } : undefined;
        const r = await backupDirectory({ repository, volumePath: opts.volumePath, parent, tags, description: source, signal, onProgress, logger: opts.logger, who: { DU: opts.name }, cache });
        return backupResultMessage({ snapshotID: r.snapshotId, emptySnapshot: false, volumePath: opts.volumePath, totalBytes: r.bytes, volumeMode: mode });
      },
    };
  });
}

export async function runDataDownload(opts: DataMoverTaskOptions): Promise<RunDataPathResult> {
  const mode = opts.volumeMode ?? 'Filesystem';
  return runTaskOn(opts, 'DD', { kind: Kinds.DataDownload, parse: parseDataDownload, logLabel: 'DataDownload' }, async (dd): Promise<DataPathWork> => {
    checkVolume(opts.volumePath, mode);
    const source = await openTaskRestoreSource(opts, { bslName: dd.spec.backupStorageLocation, volumeNamespace: dd.spec.sourceNamespace });
    logRestoreSource(opts.logger, { DD: opts.name, snapshotID: dd.spec.snapshotID, volumeMode: mode }, source);
    return {
      async run({ signal, onProgress }) {
        if (mode === 'Block') {
          const r = await restoreBlockFromSource(source, { snapshotId: dd.spec.snapshotID, devicePath: opts.volumePath, signal, onProgress });
          opts.logger.info({ DD: opts.name, bytes: r.bytes, durationMs: r.durationMs }, 'block volume restored');
          onProgress({ totalBytes: r.bytes, doneBytes: r.bytes });
          return restoreResultMessage({ volumePath: opts.volumePath, totalBytes: r.bytes, volumeMode: mode });
        }
        const bytes = await restoreDirectory(source, {
          snapshotId: dd.spec.snapshotID,
          volumePath: opts.volumePath,
          signal,
          onProgress,
          ...parallelFilesDownloadSetting(dd.spec.dataMoverConfig, opts.logger),
          ...writeSparseFilesSetting(dd.spec.dataMoverConfig),
          logger: opts.logger,
          who: { DD: opts.name },
        });
        return restoreResultMessage({ volumePath: opts.volumePath, totalBytes: bytes, volumeMode: mode });
      },
    };
  });
}
