/**
 * Validates storage locations periodically: Available or Unavailable with the reason.
 * (Placeholder: starts nothing yet; the controller lands with its issue.)
 */
import type { ServerContext, Stoppable } from './context.js';

export async function startBackupStorageLocationController(_ctx: ServerContext): Promise<Stoppable> {
  return { stop: async () => undefined };
}
