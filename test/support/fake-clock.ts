/**
 * A clock tests move by hand: `now()` and timers for the controllers' delayed requeues (TimerClock), so a cron
 * cadence of hours or a TTL of days plays out in milliseconds against the real API server. Timers fire, in time
 * order, when `advance`/`advanceTo` passes their due time.
 */
import type { TimerClock } from '../../src/base/clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements TimerClock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start: Date) {
    this.t = start.getTime();
  }

  now(): number {
    return this.t;
  }

  date(): Date {
    return new Date(this.t);
  }

  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return { cancel: () => void (this.timers = this.timers.filter((x) => x !== timer)) };
  }

  /** Moves time on by `ms`, firing every timer due by then. */
  advance(ms: number): void {
    this.advanceTo(new Date(this.t + ms));
  }

  advanceTo(when: Date): void {
    const target = when.getTime();
    if (target < this.t) throw new Error(`the fake clock only moves forward (now ${this.date().toISOString()}, asked for ${when.toISOString()})`);
    for (;;) {
      const due = this.timers.filter((x) => x.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = Math.max(this.t, due.at);
      due.fn();
    }
    this.t = target;
  }

  /** How many timers are waiting (for tests that check something is scheduled). */
  get pending(): number {
    return this.timers.length;
  }
}
