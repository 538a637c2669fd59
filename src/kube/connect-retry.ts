/**
 * In-cluster roles start before the API server may answer (or during its restart): retry with back-off until it
 * does or the caller gives up, logging each failure once per attempt.
 */
import type { Logger } from '../base/logger.js';
import { checkReachable, type Kube } from './client.js';
import { realClock, type Clock } from '../base/clock.js';

export async function waitForApiServer(kube: Kube, opts: { logger: Logger; signal?: AbortSignal; clock?: Clock; maxDelayMs?: number }): Promise<string> {
  const clock = opts.clock ?? realClock;
  for (let attempt = 1; ; attempt++) {
    try {
      const { gitVersion } = await checkReachable(kube);
      return gitVersion;
    } catch (err) {
      const delay = Math.min(opts.maxDelayMs ?? 10_000, 250 * 2 ** Math.min(attempt, 8));
      opts.logger.warn({ attempt, retryInMs: delay, err: (err as Error).message }, 'API server not reachable yet');
      await clock.sleep(delay, opts.signal);
    }
  }
}
