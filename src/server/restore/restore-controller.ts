/**
 * The Restore controller: restores items from a backup in priority order.
 * (Placeholder: starts nothing yet; the controller lands with its issue.)
 */
import type { ServerContext, Stoppable } from '../context.js';

export async function startRestoreController(_ctx: ServerContext): Promise<Stoppable> {
  return { stop: async () => undefined };
}
