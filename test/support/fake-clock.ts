/**
 * A clock tests move by hand (base/clock.ts's Clock and TimerClock): `now()`, timers for the controllers' delayed
 * requeues and throttles, and sleeps, so a cron cadence of hours or a TTL of days plays out in milliseconds. Timers
 * fire in time order when `advance`/`advanceTo`/`settle` pass their due time.
 */
import type { Clock, TimerClock } from '../../src/base/clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock, TimerClock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start: Date | number = 0) {
    this.t = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.t;
  }

  /** The time as a Date; bound, so it can be handed on as `now: clock.date`. */
  readonly date = (): Date => new Date(this.t);

  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return { cancel: () => void (this.timers = this.timers.filter((x) => x !== timer)) };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const timer = this.setTimeout(resolve, ms);
      signal?.addEventListener(
        'abort',
        () => {
          timer.cancel();
          reject(signal.reason as Error);
        },
        { once: true },
      );
    });
  }

  private nextDue(target: number): Timer | undefined {
    return this.timers.filter((x) => x.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
  }

  private fire(timer: Timer): void {
    this.timers = this.timers.filter((x) => x !== timer);
    this.t = Math.max(this.t, timer.at);
    timer.fn();
  }

  /** Moves time on by `ms`, firing every timer due by then. */
  advance(ms: number): void {
    this.advanceTo(new Date(this.t + ms));
  }

  advanceTo(when: Date): void {
    const target = when.getTime();
    if (target < this.t) throw new Error(`the fake clock only moves forward (now ${this.date().toISOString()}, asked for ${when.toISOString()})`);
    for (let due = this.nextDue(target); due; due = this.nextDue(target)) this.fire(due);
    this.t = target;
  }

  /**
   * Moves time on by `ms` like advance(), but lets the promises each timer starts settle before the next one fires
   * (a write a throttle starts, a watch restart that fails again and schedules the next).
   */
  async settle(ms: number): Promise<void> {
    const target = this.t + ms;
    await flushPromises();
    for (let due = this.nextDue(target); due; due = this.nextDue(target)) {
      this.fire(due);
      await flushPromises();
    }
    this.t = target;
    await flushPromises();
  }

  /** How many timers are waiting (for tests that check something is scheduled). */
  get pending(): number {
    return this.timers.length;
  }

  /** The waiting timers' delays from now, shortest first. */
  delays(): number[] {
    return this.timers.map((x) => x.at - this.t).sort((a, b) => a - b);
  }
}

/** Lets every promise callback queued so far run (a few turns of the microtask queue). */
export async function flushPromises(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
