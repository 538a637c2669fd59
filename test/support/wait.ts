/**
 * Poll a condition until it holds or a deadline passes: the one way tests (and the test bed) wait for the
 * cluster to reach a state. Never a fixed sleep. The condition returns a truthy value when satisfied (that
 * value is returned) and anything falsy to keep waiting; a thrown error also means "not yet", and the last
 * one is reported if the deadline passes, so a timeout says what was last seen. Throw `StopWaiting` to give up early.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface WaitOptions {
  timeoutMs: number;
  /** Pause between attempts (default 250 ms). */
  intervalMs?: number;
  /** What is awaited, for the timeout message: "pod web-0 Running". */
  description: string;
  /** Stops waiting early (test or run cancelled). */
  signal?: AbortSignal;
}

export class WaitTimeoutError extends Error {
  constructor(
    readonly description: string,
    readonly timeoutMs: number,
    readonly lastError: unknown,
  ) {
    const last = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
    super(`timed out after ${timeoutMs} ms waiting for ${description}${last}`);
    this.name = 'WaitTimeoutError';
  }
}

/** Thrown by a condition to give up at once (the awaited state can no longer come); waitFor rethrows `reason`. */
export class StopWaiting extends Error {
  constructor(readonly reason: Error) {
    super(reason.message);
    this.name = 'StopWaiting';
  }
}

export async function waitFor<T>(
  condition: () => T | Promise<T>,
  opts: WaitOptions,
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + opts.timeoutMs;
  const interval = opts.intervalMs ?? 250;
  let lastError: unknown;
  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      const value = await condition();
      if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    } catch (err) {
      if (err instanceof StopWaiting) throw err.reason;
      lastError = err;
    }
    const left = deadline - Date.now();
    if (left <= 0) throw new WaitTimeoutError(opts.description, opts.timeoutMs, lastError);
    await delay(Math.min(interval, left), undefined, opts.signal ? { signal: opts.signal } : undefined);
  }
}

/**
 * Observes work while it runs: calls `sample` at once and then every `intervalMs` until `work` settles (not after),
 * and returns what the work returns. For tests that look at live state (describe output during a backup), where
 * there is no condition to wait for, only a cadence to keep cheap.
 */
export async function sampleWhile<T>(work: Promise<T>, intervalMs: number, sample: () => Promise<void>): Promise<T> {
  let settled = false;
  const ended = work.then(
    () => void (settled = true),
    () => void (settled = true),
  );
  while (!settled) {
    await sample();
    if (!settled) await Promise.race([ended, delay(intervalMs)]);
  }
  return work;
}
