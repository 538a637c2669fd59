/**
 * Refreshes the restore ClusterRole at start and every few minutes (CRDs installed since, API groups added). A
 * failure is logged and tried again at the next tick; restores refresh it themselves after creating a CRD.
 */
import type { ServerContext, Stoppable } from '../context.js';

export const RESTORE_ROLE_REFRESH_MS = 5 * 60_000;

export async function startRestoreRoleRefresh(ctx: ServerContext): Promise<Stoppable> {
  const keeper = ctx.restoreRole;
  if (!keeper) return { stop: async () => undefined };
  const refresh = () => keeper.refresh().catch((err: unknown) => ctx.logger.warn({ err: (err as Error).message }, 'could not refresh the restore ClusterRole'));
  await refresh();
  const timer = setInterval(() => void refresh(), RESTORE_ROLE_REFRESH_MS);
  timer.unref();
  return { stop: async () => clearInterval(timer) };
}
