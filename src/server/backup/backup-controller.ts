/**
 * The Backup controller: validation, item collection, archive, phases.
 * (Placeholder: starts nothing yet; the controller lands with its issue.)
 */
import type { ServerContext, Stoppable } from '../context.js';

export async function startBackupController(_ctx: ServerContext): Promise<Stoppable> {
  return { stop: async () => undefined };
}
