/**
 * Creates Backup objects for backups found in storage but not in the cluster.
 * (Placeholder: starts nothing yet; the controller lands with its issue.)
 */
import type { ServerContext, Stoppable } from './context.js';

export async function startBackupSyncController(_ctx: ServerContext): Promise<Stoppable> {
  return { stop: async () => undefined };
}
