/**
 * Runs a long-lived role until SIGTERM/SIGINT, then stops it cleanly within a grace period. Used by `server` and
 * `node-agent server`.
 */
import type { Logger } from '../base/logger.js';

export interface Role {
  /** Starts the role; resolves once it is running. */
  start(): Promise<void>;
  /** Stops the role; must be safe to call once after start. */
  stop(): Promise<void>;
}

export async function runUntilSignal(role: Role, opts: { logger: Logger; name: string; graceMs?: number }): Promise<void> {
  const stopRequested = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  await role.start();
  opts.logger.info(`${opts.name} started`);
  const signal = await stopRequested;
  opts.logger.info({ signal }, `${opts.name} stopping`);
  const grace = opts.graceMs ?? 20_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), grace);
    timer.unref();
  });
  const outcome = await Promise.race([role.stop().then(() => 'stopped' as const), timedOut]);
  if (timer) clearTimeout(timer);
  if (outcome === 'timeout') opts.logger.warn({ graceMs: grace }, `${opts.name} did not stop in time; exiting`);
  else opts.logger.info(`${opts.name} stopped`);
}
