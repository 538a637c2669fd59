/**
 * The Backup controller's decisions (backup-controller.ts carries them out), as pure functions of the Backup as read
 * now, the time and what this process remembers: which road a Backup takes, what its start writes, and whether a
 * run may start (another server process's claim, restarts counted). Tested table by table in
 * test/unit/server/backup/backup-decisions.test.ts.
 */
import { Annotations, BackupPhase, Labels, formatDuration, isCancelRequested, labelValue, parseDuration, statusTime, type Backup } from '../../api/index.js';
import { FORMAT_VERSION } from '../archive/paths.js';
import type { ServerConfig } from '../context.js';
import { ownedByOperations, UPLOADING_ANNOTATION } from './operations-decisions.js';
import { claimState } from './run-claim.js';

/** How many times a backup interrupted by server restarts is started before it is marked Failed. */
export const MAX_ATTEMPTS = 3;
/** Counts the runs of a backup across server restarts. */
export const ATTEMPTS_ANNOTATION = 'backup.cairn.io/attempts';

const RERUN_PHASES: ReadonlySet<string> = new Set([BackupPhase.InProgress, BackupPhase.Finalizing, BackupPhase.FinalizingPartiallyFailed]);

/** A backup this controller (re)runs: InProgress, Finalizing* without PVBs, or one whose upload did not finish. */
export function mustRun(backup: Backup): boolean {
  if (backup.metadata?.annotations?.[UPLOADING_ANNOTATION] === 'true') return true;
  return RERUN_PHASES.has(backup.status?.phase ?? '') && !ownedByOperations(backup);
}

export type BackupStep = { step: 'validate' } | { step: 'run' } | { step: 'none' };

/**
 * Which road a Backup takes: New is validated and started; one that must run and is not running here is run. One
 * asked to be canceled is neither (./cancel-decisions.ts).
 */
export function backupStep(backup: Backup, o: { running: boolean }): BackupStep {
  if (isCancelRequested(backup)) return { step: 'none' };
  const phase = backup.status?.phase ?? '';
  if (phase === '' || phase === BackupPhase.New) return { step: 'validate' };
  if (mustRun(backup) && !o.running) return { step: 'run' };
  return { step: 'none' };
}

export interface StartOptions {
  locationName: string;
  /** The cluster's version, recorded as Velero does (absent when it could not be read). */
  k8s: { gitVersion: string; major: string; minor: string } | undefined;
  now: Date;
  config: ServerConfig;
}

/** The TTL of a backup: its own, or the server default when it sets none or zero (as Velero). */
export function backupTtlMs(backup: Backup, config: ServerConfig): number {
  return (backup.spec?.ttl ? parseDuration(backup.spec.ttl) : 0) || config.defaultBackupTtlMs;
}

const nonZero = (duration: string | undefined): string | undefined => (duration && parseDuration(duration) > 0 ? duration : undefined);

/**
 * What starting a validated backup writes: the location label, Velero's annotations, the spec with the server's
 * defaults filled in, and status InProgress with its expiration. False (nothing to write) unless it is still New.
 */
export function startBackup(b: Backup, o: StartOptions): boolean {
  if ((b.status?.phase ?? '') !== '' && b.status?.phase !== BackupPhase.New) return false;
  const ttlMs = backupTtlMs(b, o.config);
  b.metadata = b.metadata ?? {};
  b.metadata.labels = { ...b.metadata.labels, [Labels.StorageLocation]: labelValue(o.locationName) };
  b.metadata.annotations = {
    ...b.metadata.annotations,
    [Annotations.ResourceTimeout]: formatDuration(o.config.resourceTimeoutMs),
    ...(o.k8s
      ? {
          [Annotations.SourceClusterK8sGitVersion]: o.k8s.gitVersion,
          [Annotations.SourceClusterK8sMajorVersion]: o.k8s.major,
          [Annotations.SourceClusterK8sMinorVersion]: o.k8s.minor,
        }
      : {}),
  };
  b.spec = {
    ...b.spec,
    storageLocation: o.locationName,
    ttl: formatDuration(ttlMs),
    // The deprecated defaultVolumesToRestic: true still means fs-backup for all volumes, as Velero remaps it.
    defaultVolumesToFsBackup: b.spec?.defaultVolumesToRestic === true ? true : (b.spec?.defaultVolumesToFsBackup ?? o.config.defaultVolumesToFsBackup),
    snapshotMoveData: b.spec?.snapshotMoveData ?? false,
    // Unset or zero timeouts take the server defaults, as Velero writes them into the spec.
    csiSnapshotTimeout: nonZero(b.spec?.csiSnapshotTimeout) ?? formatDuration(o.config.defaultCsiSnapshotTimeoutMs),
    itemOperationTimeout: nonZero(b.spec?.itemOperationTimeout) ?? formatDuration(o.config.defaultItemOperationTimeoutMs),
  };
  b.status = {
    ...b.status,
    phase: BackupPhase.InProgress,
    version: 1,
    formatVersion: FORMAT_VERSION,
    startTimestamp: statusTime(o.now),
    expiration: statusTime(new Date(o.now.getTime() + ttlMs)),
    validationErrors: null,
  };
  return true;
}

export type RunStep =
  /** Another server process (the old pod of a rolling update) still runs it: look again later. */
  | { step: 'wait'; runner: string; retryInMs: number }
  /** Interrupted by too many server restarts: Failed. */
  | { step: 'give-up' }
  /** Run it (again, after a restart, when this process did not start it). */
  | { step: 'run'; attempts: number; restarted: boolean };

export function runStep(backup: Backup, o: { me: string; nowMs: number; claimStaleAfterMs?: number; startedHere: boolean }): RunStep {
  const claim = claimState(backup.metadata?.annotations, o.me, o.nowMs, o.claimStaleAfterMs);
  if (!claim.free) return { step: 'wait', runner: claim.runner, retryInMs: claim.retryInMs };
  const attempts = Number(backup.metadata?.annotations?.[ATTEMPTS_ANNOTATION] ?? '0') + 1;
  if (attempts > MAX_ATTEMPTS) return { step: 'give-up' };
  return { step: 'run', attempts, restarted: !o.startedHere };
}
