/**
 * What every in-pod data mover command shares once its flags are read (`pod-volume backup|restore`,
 * `data-mover backup|restore`): the options, following the custom resource with its watch, recording the protocol
 * Events on it, and running the data path through runDataPath. A command only supplies how to prepare the work
 * from the object once it is InProgress.
 */
import { lstatSync, readdirSync } from 'node:fs';
import type { Logger } from '../../base/logger.js';
import { backup, type BackupResult, type UploadRepository } from '../../datapath/uploader.js';
import type { Kube } from '../../kube/client.js';
import { customClient, type Parser, type ResourceKind } from '../../kube/custom.js';
import type { RetryOptions } from '../../plugins/object-store/retry.js';
import type { LockOwnerPod } from '../../datapath/locks.js';
import { openRepositoryForVolume, openRestoreSource, type RestoreSource, type VolumeRepository } from '../../storage/volume-repository.js';
import { dataPathEventRecorder } from './events.js';
import type { TaskKind, VolumeMode } from './protocol.js';
import { runDataPath, type DataPathProgress, type DataPathWork, type EventSink, type RunDataPathResult } from './run.js';
import { watchTask, type DataPathResource, type TaskWatch } from './watch.js';

export interface DataMoverTaskOptions {
  kube: Kube;
  /** Install namespace: where the custom resource, the locations and the credentials live. */
  namespace: string;
  /** Name of the PVB/PVR/DataUpload/DataDownload. */
  name: string;
  volumePath: string;
  /** `Block` only for data-mover commands; pod volumes are always file systems. */
  volumeMode?: VolumeMode;
  resourceTimeoutMs: number;
  logger: Logger;
  nodeName?: string | undefined;
  /** Minimum time between Progress events (default 10 s, as Velero). */
  progressIntervalMs?: number;
  /** Backups: the most bytes per second written to the object store. */
  uploadBytesPerSecond?: number;
  /** Backups: the directory of the listing caches (listing-cache.ts), kept under each volume's real source. */
  cacheDir?: string;
  /** How long one object-store call that fails transiently is retried (default 5 minutes). */
  storeRetryForMs?: number;
  /** This pod, named in the repository locks the task takes. */
  lockOwner?: LockOwnerPod | undefined;
  /** Aborts the task (SIGTERM): it stops, releases its repository lock and reports a failure. */
  signal?: AbortSignal;
}

/**
 * How this task retries its object store: the budget from the options, and a warning in the log when a call starts
 * failing and then every few attempts, so an outage is visible while the data mover rides it out.
 */
export function storeRetryOptions(opts: Pick<DataMoverTaskOptions, 'storeRetryForMs' | 'logger' | 'name'>): RetryOptions {
  return {
    ...(opts.storeRetryForMs !== undefined ? { retryForMs: opts.storeRetryForMs } : {}),
    onRetry: (e) => {
      if (e.attempt !== 1 && e.attempt % 5 !== 0) return;
      opts.logger.warn(
        { task: opts.name, operation: e.operation, attempt: e.attempt, retryingInMs: Math.round(e.delayMs), failingForMs: Math.round(e.elapsedMs), err: e.error.message },
        'object store call failed; retrying',
      );
    },
  };
}

/** Which repository a task's volume data lives in: its location and the namespace of the volume's workload. */
export interface TaskRepositoryRef {
  bslName: string;
  volumeNamespace: string;
}

/** A backup task's repository, opened with the task's retry budget, upload cap and lock owner. */
export function openTaskRepository(opts: DataMoverTaskOptions, ref: TaskRepositoryRef): Promise<VolumeRepository> {
  return openRepositoryForVolume({
    kube: opts.kube,
    namespace: opts.namespace,
    ...ref,
    uploadBytesPerSecond: opts.uploadBytesPerSecond,
    retry: storeRetryOptions(opts),
    lockOwner: opts.lockOwner,
  });
}

/**
 * What a restore task reads from: cairn's own repository, or Velero's kopia repository of a backup Velero made (read,
 * never written), opened with the task's retry budget and lock owner.
 */
export function openTaskRestoreSource(opts: DataMoverTaskOptions, ref: TaskRepositoryRef): Promise<RestoreSource> {
  return openRestoreSource({ kube: opts.kube, namespace: opts.namespace, ...ref, retry: storeRetryOptions(opts), lockOwner: opts.lockOwner });
}

/** Runs one task: watch, wait for InProgress, prepare, transfer, report. The watch is stopped whatever happens. */
export async function runWatchedTask<T extends DataPathResource>(
  opts: DataMoverTaskOptions,
  kind: TaskKind,
  watch: TaskWatch<T>,
  prepare: (obj: T, signal: AbortSignal) => Promise<DataPathWork>,
): Promise<RunDataPathResult> {
  const recorder = dataPathEventRecorder(opts.kube, { component: opts.name, host: opts.nodeName });
  let inProgress: T | undefined;
  const events: EventSink = {
    emit: async (reason, message) => {
      const obj = watch.current() ?? inProgress;
      if (!obj) throw new Error(`${kind} ${opts.name} is gone`);
      await recorder.record(obj, reason, message);
    },
  };
  await watch.start();
  try {
    return await runDataPath({
      kind,
      name: opts.name,
      events,
      logger: opts.logger,
      progressIntervalMs: opts.progressIntervalMs ?? 10_000,
      waitUntilInProgress: async (signal) => {
        inProgress = await watch.waitUntilInProgress({ timeoutMs: opts.resourceTimeoutMs, signal });
      },
      onCancelRequested: (l) => watch.onCancelRequested(l),
      stop: opts.signal,
      prepare: (signal) => {
        if (!inProgress) throw new Error(`${kind} ${opts.name} is not InProgress`);
        return prepare(inProgress, signal);
      },
    });
  } finally {
    await watch.stop().catch(() => undefined);
  }
}

/** The custom resource a task carries out: its kind, how it is parsed, and how the watch names it in the log. */
export interface TaskResource<T extends DataPathResource> {
  kind: ResourceKind;
  parse: Parser<T>;
  logLabel: string;
}

/** runWatchedTask on the object `opts.name` of `resource`, watched for the task's whole run. */
export function runTaskOn<T extends DataPathResource>(
  opts: DataMoverTaskOptions,
  kind: TaskKind,
  resource: TaskResource<T>,
  prepare: (obj: T, signal: AbortSignal) => Promise<DataPathWork>,
): Promise<RunDataPathResult> {
  const client = customClient<T>(opts.kube, resource.kind, resource.parse);
  const watch = watchTask({ kube: opts.kube, client, namespace: opts.namespace, name: opts.name, kindLabel: resource.logLabel, logger: opts.logger });
  return runWatchedTask(opts, kind, watch, prepare);
}

export function isEmptyDirectory(path: string): boolean {
  return readdirSync(path).length === 0;
}

/** A Filesystem volume must be a directory we can see; the error names the path, never anything else. */
export function checkFilesystemVolume(path: string): void {
  let isDir: boolean;
  try {
    isDir = lstatSync(path).isDirectory();
  } catch (err) {
    throw new Error(`volume path ${path} is not accessible: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  if (!isDir) throw new Error(`volume path ${path} is not a directory`);
}

/** What a finished backup tells the data mover's log: paths left out, paths skipped, and the snapshot's figures. */
export function logBackupOutcome(logger: Logger, who: Record<string, string>, result: BackupResult): void {
  for (const e of result.errors) logger.warn({ ...who, path: e.path }, `not backed up: ${e.reason}`);
  for (const s of result.skipped) logger.info({ ...who, path: s.path }, s.reason);
  const s = result.stats;
  logger.info(
    { ...who, snapshotID: result.snapshotId, bytes: s.bytes, newBytes: s.newBytes, reusedBytes: s.reusedBytes, files: s.files, cachedDirs: result.cachedDirs, readAheadFiles: result.readAheadFiles, durationMs: s.durationMs },
    'snapshot written',
  );
}

/**
 * Backs up the mounted directory of a pod volume or a Filesystem data-mover volume: the snapshot, its outcome in the
 * log and the final progress. Returns the snapshot ID and the bytes it holds; the caller words the result message.
 */
export async function backupDirectory(opts: {
  repository: UploadRepository;
  volumePath: string;
  parent: string | undefined;
  tags: Record<string, string>;
  description: string;
  signal: AbortSignal;
  onProgress: (p: DataPathProgress) => void;
  logger: Logger;
  who: Record<string, string>;
  /** The listing cache: its directory, and the key it is kept under (the volume's real source). */
  cache?: { dir: string; key: string } | undefined;
}): Promise<{ snapshotId: string; bytes: number }> {
  const result = await backup({
    source: opts.volumePath,
    repository: opts.repository,
    parent: opts.parent ?? null,
    tags: opts.tags,
    description: opts.description,
    signal: opts.signal,
    onProgress: (p) => opts.onProgress({ totalBytes: p.totalBytes, doneBytes: p.doneBytes }),
    progressIntervalMs: 1000,
    ...(opts.cache ? { cacheDir: opts.cache.dir, cacheKey: opts.cache.key } : {}),
  });
  logBackupOutcome(opts.logger, opts.who, result);
  const bytes = result.stats.bytes;
  opts.onProgress({ totalBytes: bytes, doneBytes: bytes });
  return { snapshotId: result.snapshotId, bytes };
}
