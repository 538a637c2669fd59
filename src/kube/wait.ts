/**
 * Polling with a deadline, for CLI waits and controllers. Time is injectable so tests never sleep for real.
 */
import { realClock, type Clock } from '../base/clock.js';

export class TimeoutError extends Error {
  constructor(what: string, ms: number, last?: string) {
    super(`timed out after ${Math.round(ms / 1000)}s waiting for ${what}${last ? ` (last seen: ${last})` : ''}`);
    this.name = 'TimeoutError';
  }
}

export interface PollOptions {
  what: string;
  timeoutMs: number;
  intervalMs?: number;
  clock?: Clock;
  signal?: AbortSignal;
}

/**
 * Calls `check` until it returns `{done: true}`; `state` describes what was last seen for the timeout message
 * and for progress reporting.
 */
export async function pollUntil<T>(
  check: () => Promise<{ done: boolean; value?: T; state?: string }>,
  opts: PollOptions,
): Promise<T | undefined> {
  const clock = opts.clock ?? realClock;
  const deadline = clock.now() + opts.timeoutMs;
  let last: string | undefined;
  for (;;) {
    const r = await check();
    if (r.done) return r.value;
    last = r.state ?? last;
    if (clock.now() >= deadline) throw new TimeoutError(opts.what, opts.timeoutMs, last);
    await clock.sleep(opts.intervalMs ?? 1000, opts.signal);
  }
}
