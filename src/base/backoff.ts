/**
 * Exponential back-off with jitter, for retries and restarts: attempt n waits baseMs·2^(n-1), at most maxMs, spread
 * by ±20 % so that many clients failing together do not retry together. `random` is injected so tests know the delay.
 */
export function backoffMs(attempt: number, opts: { baseMs: number; maxMs: number; random?: () => number }): number {
  const exp = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return Math.round(exp * (0.8 + (opts.random ?? Math.random)() * 0.4));
}
