/**
 * Processes DownloadRequests: a URL (and an in-cluster stream) for backup and restore files.
 * (Placeholder: starts nothing yet; the controller lands with its issue.)
 */
import type { ServerContext, Stoppable } from './context.js';

export async function startDownloadRequestController(_ctx: ServerContext): Promise<Stoppable> {
  return { stop: async () => undefined };
}
