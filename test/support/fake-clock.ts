/**
 * A clock for unit tests (base/clock.ts's Clock and TimerClock): time moves only when the test says so, and the
 * callbacks and sleeps that fall due run in time order.
 */
import type { Clock, TimerClock } from '../../src/base/clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock, TimerClock {
  private timers: Timer[] = [];
  private seq = 0;

  constructor(private time = 0) {}

  now(): number {
    return this.time;
  }

  /** The time as a Date (for code that takes `now: () => Date`). */
  date = (): Date => new Date(this.time);

  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    const timer: Timer = { at: this.time + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return { cancel: () => void (this.timers = this.timers.filter((t) => t !== timer)) };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const timer = this.setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        timer.cancel();
        reject(signal.reason as Error);
      }, { once: true });
    });
  }

  /** Delays of the callbacks waiting now, from now. */
  pending(): number[] {
    return this.timers.map((t) => t.at - this.time).sort((a, b) => a - b);
  }

  /** Moves time on by `ms`, running what falls due in order, and lets the promises they settle run. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = due.at;
      due.fn();
      await flushPromises();
    }
    this.time = until;
    await flushPromises();
  }
}

/** Lets every promise callback queued so far run (a few turns of the microtask queue). */
export async function flushPromises(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
