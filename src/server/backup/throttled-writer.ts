/**
 * Writes the latest of a stream of values at most once per interval (backup progress: thousands of items a second
 * must not become thousands of API writes). A value equal to the last written one is not written again; writes never
 * overlap; `stop()` drops what is pending and waits for a write in flight.
 */
export interface ThrottledWriter<T> {
  report(value: T): void;
  stop(): Promise<void>;
}

export function throttledWriter<T>(opts: { intervalMs: number; write: (value: T) => Promise<unknown>; onError?: (err: unknown) => void }): ThrottledWriter<T> {
  let latest: T | undefined;
  let written: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let inflight: Promise<unknown> = Promise.resolve();
  let stopped = false;

  const flush = () => {
    timer = undefined;
    if (stopped || latest === undefined) return;
    const value = latest;
    const text = JSON.stringify(value);
    if (text === written) return;
    written = text;
    inflight = inflight.then(() => opts.write(value)).catch((err: unknown) => opts.onError?.(err));
  };

  return {
    report(value) {
      if (stopped) return;
      latest = value;
      if (!timer) {
        timer = setTimeout(flush, opts.intervalMs);
        timer.unref();
      }
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await inflight;
    },
  };
}
