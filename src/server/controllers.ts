/**
 * Every controller the server runs, in start order. One file per controller; each start function takes the
 * ServerContext and returns something to stop.
 */
import type { ServerContext, Stoppable } from './context.js';
import { startServerStatusRequestController } from './server-status-request-controller.js';
import { startBackupStorageLocationController } from './backup-storage-location-controller.js';
import { startBackupSyncController } from './backup-sync-controller.js';
import { startBackupController } from './backup/backup-controller.js';
import { startRestoreController } from './restore/restore-controller.js';
import { startGcController } from './gc-controller.js';
import { startDeleteBackupRequestController } from './delete-backup-request-controller.js';
import { startDownloadRequestController } from './download-request-controller.js';
import { startBackupRepositoryController } from './backup-repository-controller.js';
import { registerBuiltinActions } from './item-actions/builtin.js';
import { ItemActionRegistry } from '../plugins/item-actions/registry.js';
import { serverPluginList } from './plugins.js';
import { startScheduleController } from './schedule/schedule-controller.js';
import { startRestoreRoleRefresh } from './rbac/restore-role-refresh.js';
import { startServerMetricsObserver } from './metrics/metrics-observer.js';

export const CONTROLLERS: readonly { name: string; start: (ctx: ServerContext) => Promise<Stoppable> }[] = [
  // First: restores need the restore ClusterRole current.
  { name: 'restore-role', start: startRestoreRoleRefresh },
  // Before the controllers that move phases, so it sees every change they make from the start.
  { name: 'metrics', start: startServerMetricsObserver },
  {
    name: 'server-status-request',
    start: (ctx) => {
      const listed = serverPluginList(ctx.plugins, registerBuiltinActions(new ItemActionRegistry()));
      return startServerStatusRequestController({ ...ctx, plugins: () => listed });
    },
  },
  { name: 'backup-storage-location', start: startBackupStorageLocationController },
  { name: 'backup-sync', start: startBackupSyncController },
  { name: 'backup', start: startBackupController },
  { name: 'restore', start: startRestoreController },
  { name: 'schedule', start: startScheduleController },
  { name: 'gc', start: startGcController },
  { name: 'delete-backup-request', start: startDeleteBackupRequestController },
  { name: 'download-request', start: startDownloadRequestController },
  { name: 'backup-repository', start: (ctx) => startBackupRepositoryController(ctx) },
];
