/**
 * Processes DeleteBackupRequests: deletes storage objects, then the Backup.
 * (Placeholder: starts nothing yet; the controller lands with its issue.)
 */
import type { ServerContext, Stoppable } from './context.js';

export async function startDeleteBackupRequestController(_ctx: ServerContext): Promise<Stoppable> {
  return { stop: async () => undefined };
}
