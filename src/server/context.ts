/**
 * What every server controller receives: cluster access, the install namespace, a logger, the clock, and the
 * server's configuration (flags of `cairn server`, Velero's defaults).
 */
import type { RestoreRoleKeeper } from './rbac/restore-role.js';
import type { Logger } from '../base/logger.js';
import type { Kube } from '../kube/client.js';
import type { TimerClock } from '../base/clock.js';
import type { HttpRoutes } from '../kube/health.js';
import type { ServerPlugins } from './plugins.js';
import type { MetricsRegistry } from '../base/metrics.js';

export interface ServerConfig {
  /** Location used when a Backup names none (`--default-backup-storage-location`). */
  defaultBackupLocation: string;
  /** TTL of backups that set none (`--default-backup-ttl`, 720h). */
  defaultBackupTtlMs: number;
  /** How often storage locations are checked (`--store-validation-frequency`, 1m). */
  storeValidationFrequencyMs: number;
  /** How often backups are synced from storage (`--backup-sync-period`, 1m). */
  backupSyncPeriodMs: number;
  /** How often expired backups are looked for (`--garbage-collection-frequency`, 1h). */
  gcFrequencyMs: number;
  /** Give up on one API object after this long (`--resource-timeout`, 10m). */
  resourceTimeoutMs: number;
  /** Give up waiting for pod volume backups/restores (`--fs-backup-timeout`, 240m). */
  fsBackupTimeoutMs: number;
  /** Back up all pod volumes with fs-backup unless excluded (`--default-volumes-to-fs-backup`). */
  defaultVolumesToFsBackup: boolean;
  /** CSI snapshot timeout of backups that set none (Velero: 10m). */
  defaultCsiSnapshotTimeoutMs: number;
  /** Async item operation timeout of backups and restores that set none (`--default-item-operation-timeout`, 4h). */
  defaultItemOperationTimeoutMs: number;
  /** How often plugins are asked for the progress of their operations (`--item-operation-sync-frequency`, 10s). */
  itemOperationSyncFrequencyMs: number;
  /** Skip the run due right away when a schedule is created or unpaused, unless it says otherwise (`--schedule-skip-immediately`). */
  scheduleSkipImmediately: boolean;
}

export const DEFAULT_SERVER_CONFIG: ServerConfig = {
  defaultBackupLocation: 'default',
  defaultBackupTtlMs: 720 * 3600_000,
  storeValidationFrequencyMs: 60_000,
  backupSyncPeriodMs: 60_000,
  gcFrequencyMs: 3600_000,
  resourceTimeoutMs: 10 * 60_000,
  fsBackupTimeoutMs: 240 * 60_000,
  defaultVolumesToFsBackup: false,
  defaultCsiSnapshotTimeoutMs: 10 * 60_000,
  defaultItemOperationTimeoutMs: 4 * 3600_000,
  itemOperationSyncFrequencyMs: 10_000,
  scheduleSkipImmediately: false,
};

export interface ServerContext {
  kube: Kube;
  /** The install namespace: where cairn's own objects live. */
  namespace: string;
  logger: Logger;
  version: string;
  config: ServerConfig;
  now: () => Date;
  /**
   * Timers for delayed requeues of controllers that wait for a time (schedules, TTL expiry); tests pass a fake one
   * together with a matching `now`. Default: real timers.
   */
  clock?: TimerClock;
  /** The server's HTTP port (health and /download/), where controllers may serve extra paths; absent in tests. */
  http?: HttpRoutes;
  /** External plugins found at start (`--plugin-dir`); absent in tests and when the server runs none. */
  plugins?: ServerPlugins;
  /** Keeps the restore ClusterRole current (rbac/restore-role.ts); absent in tests. */
  restoreRole?: RestoreRoleKeeper;
  /** The server's metrics (metrics/definitions.ts), served on /metrics; absent in tests. */
  metrics?: MetricsRegistry;
}

/** Something a controller start function returns. */
export interface Stoppable {
  stop(): Promise<void>;
}
