/**
 * Writes the latest of a stream of values at most once per interval (progress: thousands of updates a second must
 * not become thousands of API writes). A value equal to the last written one is not written again; writes never
 * overlap (each waits for the one before); `stop()` drops what is pending and waits for a write in flight.
 *
 * When the interval counts from: by default from the first value reported after a write (so a burst is written
 * once, an interval later); with `sinceLastWrite`, from the last write (a value after a quiet spell is written at
 * once).
 */
import { realTimerClock, type TimerClock } from './clock.js';

export interface ThrottledWriter<T> {
  report(value: T): void;
  stop(): Promise<void>;
}

export interface ThrottledWriterOptions<T> {
  intervalMs: number;
  write: (value: T) => Promise<unknown>;
  onError?: (err: unknown) => void;
  sinceLastWrite?: boolean;
  clock?: TimerClock;
}

export function throttledWriter<T>(opts: ThrottledWriterOptions<T>): ThrottledWriter<T> {
  const clock = opts.clock ?? realTimerClock;
  let latest: T | undefined;
  let written: string | undefined;
  let lastWriteAt = Number.NEGATIVE_INFINITY;
  let timer: { cancel(): void } | undefined;
  let inflight: Promise<unknown> = Promise.resolve();
  let stopped = false;

  const flush = () => {
    timer = undefined;
    if (stopped || latest === undefined) return;
    const value = latest;
    const text = JSON.stringify(value);
    if (text === written) return;
    written = text;
    lastWriteAt = clock.now();
    inflight = inflight.then(() => opts.write(value)).catch((err: unknown) => opts.onError?.(err));
  };

  return {
    report(value) {
      if (stopped) return;
      latest = value;
      if (timer) return;
      const wait = opts.sinceLastWrite ? Math.max(0, opts.intervalMs - (clock.now() - lastWriteAt)) : opts.intervalMs;
      timer = clock.setTimeout(flush, wait);
    },
    async stop() {
      stopped = true;
      timer?.cancel();
      timer = undefined;
      await inflight;
    },
  };
}
