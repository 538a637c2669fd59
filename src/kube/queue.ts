/**
 * A keyed work queue for controllers: one key is never worked on twice at once, a key added while it is being
 * worked on runs once more afterwards, failures retry with exponential back-off and jitter, and delayed re-queues
 * (`addAfter`) replace polling loops. Time is injected so tests drive it without real sleeps.
 */
import { realTimerClock, type TimerClock } from '../base/clock.js';

export interface WorkQueueOptions {
  /** Keys worked on at the same time (different keys only). */
  concurrency: number;
  work: (key: string) => Promise<{ requeueAfterMs?: number } | void>;
  onError?: (key: string, err: unknown, attempt: number) => void;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  clock?: TimerClock;
  random?: () => number;
}

export class WorkQueue {
  private readonly ready: string[] = [];
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; cancel(): void }>();
  private readonly failures = new Map<string, number>();
  private stopped = false;
  private idleWaiters: (() => void)[] = [];
  private readonly clock: TimerClock;

  constructor(private readonly opts: WorkQueueOptions) {
    this.clock = opts.clock ?? realTimerClock;
  }

  add(key: string): void {
    if (this.stopped) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.ready.push(key);
    this.pump();
  }

  /** Adds the key after `ms`; an earlier pending timer for the key wins. */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) return this.add(key);
    const at = this.clock.now() + ms;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    existing?.cancel();
    const timer = this.clock.setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, { at, cancel: timer.cancel });
  }

  get length(): number {
    return this.ready.length + this.active.size;
  }

  /** Resolves when nothing is queued or running (delayed keys do not count). */
  idle(): Promise<void> {
    if (this.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
    this.ready.length = 0;
    this.queued.clear();
  }

  private pump(): void {
    while (!this.stopped && this.active.size < this.opts.concurrency && this.ready.length > 0) {
      const key = this.ready.shift() as string;
      this.queued.delete(key);
      this.active.add(key);
      void this.runOne(key);
    }
    if (this.length === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      waiters.forEach((w) => w());
    }
  }

  private backoff(attempt: number): number {
    const base = this.opts.baseBackoffMs ?? 500;
    const max = this.opts.maxBackoffMs ?? 60_000;
    const exp = Math.min(max, base * 2 ** Math.min(attempt - 1, 20));
    const jitter = (this.opts.random ?? Math.random)() * exp * 0.2;
    return Math.round(exp + jitter);
  }

  private async runOne(key: string): Promise<void> {
    try {
      const result = await this.opts.work(key);
      this.failures.delete(key);
      if (result && result.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
    } catch (err) {
      const attempt = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, attempt);
      this.opts.onError?.(key, err, attempt);
      this.addAfter(key, this.backoff(attempt));
    } finally {
      this.active.delete(key);
      if (this.dirty.delete(key)) this.add(key);
      this.pump();
    }
  }
}
