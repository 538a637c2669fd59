/**
 * Time as an injected dependency: code that waits, polls, throttles or backs off takes a clock, so tests drive time
 * by hand and never sleep for real.
 */

/** Reading the time and sleeping (cancellable). */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(t);
        reject(signal?.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** Reading the time and scheduling callbacks, for queues and back-off timers. */
export interface TimerClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): { cancel(): void };
}

export const realTimerClock: TimerClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};

/** Like realTimerClock, but its timers keep the process alive (a watch waiting to restart is work still to do). */
export const keepAliveTimerClock: TimerClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};
