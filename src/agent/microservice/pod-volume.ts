/**
 * `cairn pod-volume backup|restore` behind the command: follows the PVB/PVR, runs the data path on the mounted
 * volume, emits the protocol Events on the CR, and returns the termination message. It never writes the CR's status:
 * the node-agent's controller owns status and learns the outcome from the Events and the termination message.
 */
import { Kinds, parsePodVolumeBackup, parsePodVolumeRestore, type PodVolumeBackup, type PodVolumeRestore } from '../../api/index.js';
import { Annotations, Labels } from '../../api/constants.js';
import type { Logger } from '../../base/logger.js';
import type { SnapshotStore } from '../../datapath/snapshots.js';
import type { SnapshotId } from '../../datapath/ids.js';
import { backupResultMessage, restoreResultMessage } from './protocol.js';
import { logRestoreSource, restoreDirectory, writeSparseFilesSetting } from './restore-source.js';
import type { RunDataPathResult } from './run.js';
import { writeCompletionMarker } from './completion-marker.js';
import { backupDirectory, checkFilesystemVolume, isEmptyDirectory, openTaskRepository, openTaskRestoreSource, runTaskOn, type DataMoverTaskOptions } from './task.js';

/** Snapshot tags that identify fs-backup snapshots (Velero's keys) and their source across pod re-creations. */
export const SnapshotTags = {
  Requester: 'snapshot-requester',
  Uploader: 'snapshot-uploader',
  /** `<podNamespace>/<podName>/<pvcName or volumeName>`: the parent of the next backup is found by it. */
  RealSource: 'snapshot-real-source',
} as const;

/** The options of a pod volume task (the shared task options; volumeMode is always Filesystem here). */
export type PodVolumeTaskOptions = DataMoverTaskOptions;

/** `<podNamespace>/<podName>/<pvcName or volumeName>`, the identity Velero gives an fs-backup source. */
export function realSource(pvb: PodVolumeBackup): string {
  const pvc = pvb.metadata?.annotations?.[Annotations.PVCName];
  return `${pvb.spec.pod.namespace ?? ''}/${pvb.spec.pod.name ?? ''}/${pvc || pvb.spec.volume}`;
}

/**
 * The latest snapshot taken of the same real source, if any: the parent of an incremental backup. `alsoMatching`
 * narrows it further (the data mover keeps Filesystem and Block snapshots of one PVC apart).
 */
export async function findParentSnapshot(snapshots: Pick<SnapshotStore, 'list'>, source: string, alsoMatching: Record<string, string> = {}): Promise<SnapshotId | undefined> {
  const matches = (tags: Record<string, string>) => tags[SnapshotTags.RealSource] === source && Object.entries(alsoMatching).every(([k, v]) => tags[k] === v);
  const matching = (await snapshots.list()).filter((s) => matches(s.tags));
  matching.sort((a, b) => a.time.localeCompare(b.time));
  return matching.at(-1)?.id;
}

/** `uploaderSettings.ParallelFilesDownload` (Velero's key): files restored at once, when a positive integer. */
export function parallelFilesDownload(pvr: PodVolumeRestore, logger?: Logger): { concurrency?: number } {
  return parallelFilesDownloadSetting(pvr.spec.uploaderSettings, logger);
}

/**
 * `ParallelFilesDownload` from an uploader settings map (a PVR's `spec.uploaderSettings`, a DataDownload's
 * `spec.dataMoverConfig`, where Velero stores the restore's uploader config under the same keys).
 */
export function parallelFilesDownloadSetting(settings: Record<string, string> | null | undefined, logger?: Logger): { concurrency?: number } {
  const raw = settings?.ParallelFilesDownload;
  if (raw === undefined || raw === '') return {};
  const n = Number(raw);
  if (Number.isInteger(n) && n > 0) return { concurrency: n };
  logger?.warn({ ParallelFilesDownload: raw }, 'ignoring uploader setting ParallelFilesDownload: not a positive integer');
  return {};
}

export async function runPodVolumeBackup(opts: PodVolumeTaskOptions): Promise<RunDataPathResult> {
  return runTaskOn(opts, 'PVB', { kind: Kinds.PodVolumeBackup, parse: parsePodVolumeBackup, logLabel: 'PVB' }, async (pvb) => {
    checkFilesystemVolume(opts.volumePath);
    const volumeNamespace = pvb.spec.pod.namespace ?? '';
    const { repository, location } = await openTaskRepository(opts, { bslName: pvb.spec.backupStorageLocation, volumeNamespace });
    const source = realSource(pvb);
    opts.logger.info({ PVB: opts.name, repository: location, source }, 'repository opened');
    return {
      async run({ signal, onProgress }) {
        if (isEmptyDirectory(opts.volumePath)) {
          opts.logger.info({ PVB: opts.name }, 'volume is empty; no snapshot taken');
          return backupResultMessage({ snapshotID: '', emptySnapshot: true, volumePath: opts.volumePath, totalBytes: 0 });
        }
        const parent = await findParentSnapshot(repository.snapshots, source);
        opts.logger.info({ PVB: opts.name, parent: parent ?? null }, parent ? 'incremental backup against the previous snapshot' : 'full backup (no previous snapshot)');
        const r = await backupDirectory({
          repository,
          volumePath: opts.volumePath,
          parent,
          tags: { ...(pvb.spec.tags ?? {}), [SnapshotTags.Requester]: 'snapshot-pod-volume', [SnapshotTags.Uploader]: 'kopia', [SnapshotTags.RealSource]: source },
          description: source,
          signal,
          onProgress,
          logger: opts.logger,
          who: { PVB: opts.name },
          cache: opts.cacheDir ? { dir: opts.cacheDir, key: source } : undefined,
        });
        return backupResultMessage({ snapshotID: r.snapshotId, emptySnapshot: false, volumePath: opts.volumePath, totalBytes: r.bytes });
      },
    };
  });
}

export async function runPodVolumeRestore(opts: PodVolumeTaskOptions): Promise<RunDataPathResult> {
  return runTaskOn(opts, 'PVR', { kind: Kinds.PodVolumeRestore, parse: parsePodVolumeRestore, logLabel: 'PVR' }, async (pvr) => {
    checkFilesystemVolume(opts.volumePath);
    const source = await openTaskRestoreSource(opts, { bslName: pvr.spec.backupStorageLocation, volumeNamespace: pvr.spec.sourceNamespace });
    logRestoreSource(opts.logger, { PVR: opts.name, snapshotID: pvr.spec.snapshotID }, source);
    return {
      async run({ signal, onProgress }) {
        const bytes = await restoreDirectory(source, {
          snapshotId: pvr.spec.snapshotID,
          volumePath: opts.volumePath,
          signal,
          onProgress,
          ...parallelFilesDownload(pvr, opts.logger),
          ...writeSparseFilesSetting(pvr.spec.uploaderSettings),
          logger: opts.logger,
          who: { PVR: opts.name },
        });
        const restoreUID = pvr.metadata?.ownerReferences?.[0]?.uid ?? pvr.metadata?.labels?.[Labels.RestoreUID];
        if (restoreUID) {
          try {
            writeCompletionMarker(opts.volumePath, restoreUID);
          } catch (err) {
            opts.logger.warn({ PVR: opts.name, err: (err as Error).message }, 'could not write the restore done marker');
          }
        } else {
          opts.logger.warn({ PVR: opts.name }, 'PVR has no owner Restore; no done marker written');
        }
        return restoreResultMessage({ volumePath: opts.volumePath, totalBytes: bytes });
      },
    };
  });
}
