import { Flags } from '@oclif/core';
import { BaseCommand, roleLogLevel } from '../cli/base-command.js';
import { createLogger } from '../base/logger.js';
import { connect } from '../kube/client.js';
import { createServer } from '../server/server.js';
import { runUntilSignal } from '../kube/lifecycle.js';
import { SERVER_HEALTH_PORT } from '../api/install-names.js';
import { clientVersion } from '../base/version.js';
import { parseDuration } from '../cli/duration.js';
import { DEFAULT_SERVER_CONFIG, type ServerConfig } from '../server/context.js';
import { DEFAULT_PLUGIN_DIR } from '../api/install-names.js';
import { parseListenAddress } from '../kube/health.js';
import { roleEndpointFlags } from '../cli/role-flags.js';

export default class Server extends BaseCommand<typeof Server> {
  static override summary = 'Run the cairn server (the controllers of the install namespace). Runs in the cairn Deployment.';
  static override hidden = true;
  static override flags = {
    ...roleEndpointFlags(SERVER_HEALTH_PORT, ", Velero's metrics port"),
    'default-volumes-to-fs-backup': Flags.boolean({ description: 'Back up all pod volumes with file-system backup unless excluded.', default: false }),
    'default-backup-storage-location': Flags.string({ description: 'Location for backups that name none (when no location is marked default).', default: DEFAULT_SERVER_CONFIG.defaultBackupLocation }),
    'default-backup-ttl': Flags.string({ description: 'TTL of backups that set none.', default: '720h0m0s' }),
    'store-validation-frequency': Flags.string({ description: 'How often storage locations are validated.', default: '1m' }),
    'backup-sync-period': Flags.string({ description: 'How often backups are synced from storage.', default: '1m' }),
    'garbage-collection-frequency': Flags.string({ description: 'How often expired backups are looked for.', default: '1h' }),
    'resource-timeout': Flags.string({ description: 'How long to wait on one API object.', default: '10m' }),
    'fs-backup-timeout': Flags.string({ description: 'How long pod volume backups and restores may take.', default: '4h' }),
    'default-item-operation-timeout': Flags.string({ description: 'How long async item operations may take when a backup sets no timeout.', default: '4h' }),
    'item-operation-sync-frequency': Flags.string({ description: 'How often the progress of asynchronous plugin operations is asked for.', default: '10s' }),
    'plugin-dir': Flags.string({ description: 'Directory of plugin binaries (Velero plugins; install copies them here).', default: DEFAULT_PLUGIN_DIR }),
    'prefer-plugin': Flags.string({
      description: 'Use the plugin registered under this name instead of the built-in of the same name (e.g. velero.io/aws); repeatable or comma-separated.',
      multiple: true,
      delimiter: ',',
      default: [],
    }),
    'plugin-timeout': Flags.string({ description: 'Time limit of one plugin call (between two messages for a transfer).', default: '10m' }),
    'schedule-skip-immediately': Flags.boolean({ description: 'Skip the backup due right away when a schedule is created or unpaused, for schedules that do not set spec.skipImmediately.', default: false }),
  };

  async run(): Promise<void> {
    const level = roleLogLevel(this.flags['log-level']);
    const logger = createLogger({ level, format: this.flags['log-format'], bindings: { component: 'server' } });
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const f = this.flags;
    const config: ServerConfig = {
      defaultBackupLocation: f['default-backup-storage-location'],
      defaultBackupTtlMs: parseDuration('--default-backup-ttl', f['default-backup-ttl']),
      storeValidationFrequencyMs: parseDuration('--store-validation-frequency', f['store-validation-frequency']),
      backupSyncPeriodMs: parseDuration('--backup-sync-period', f['backup-sync-period']),
      gcFrequencyMs: parseDuration('--garbage-collection-frequency', f['garbage-collection-frequency']),
      resourceTimeoutMs: parseDuration('--resource-timeout', f['resource-timeout']),
      fsBackupTimeoutMs: parseDuration('--fs-backup-timeout', f['fs-backup-timeout']),
      defaultVolumesToFsBackup: f['default-volumes-to-fs-backup'],
      defaultCsiSnapshotTimeoutMs: DEFAULT_SERVER_CONFIG.defaultCsiSnapshotTimeoutMs,
      defaultItemOperationTimeoutMs: parseDuration('--default-item-operation-timeout', f['default-item-operation-timeout']),
      itemOperationSyncFrequencyMs: parseDuration('--item-operation-sync-frequency', f['item-operation-sync-frequency']),
      scheduleSkipImmediately: f['schedule-skip-immediately'],
    };
    const plugins = {
      dir: f['plugin-dir'],
      prefer: f['prefer-plugin'],
      callTimeoutMs: parseDuration('--plugin-timeout', f['plugin-timeout']),
      // The server's own level: the flag's default (warn) would keep the plugins' info lines out of the logs.
      logLevel: level,
    };
    const metricsAddress = parseListenAddress('--metrics-address', f['metrics-address']);
    const role = createServer({ kube, namespace: f.namespace, logger, healthPort: f['health-port'], healthHost: f['health-address'], metricsAddress, version: clientVersion(), config, plugins });
    await runUntilSignal(role, { logger, name: 'server' });
  }
}

