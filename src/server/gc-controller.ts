/**
 * Expires backups past their TTL by creating DeleteBackupRequests.
 * (Placeholder: starts nothing yet; the controller lands with its issue.)
 */
import type { ServerContext, Stoppable } from './context.js';

export async function startGcController(_ctx: ServerContext): Promise<Stoppable> {
  return { stop: async () => undefined };
}
