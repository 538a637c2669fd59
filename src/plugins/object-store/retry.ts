/**
 * Retries transient failures (connection refused or reset, timeouts, throttling, 5xx) with capped exponential
 * back-off and full jitter, for a time budget rather than a number of attempts: an object store that restarts,
 * fails over or throttles for a few minutes is ordinary, and a nightly backup must ride it out. Each operation has
 * its own budget, counted from its first failure; work already done is never redone, because only the failing call
 * is repeated. Non-retryable errors (not found, access denied, a bad request) pass through at once. When the budget
 * is spent the last error is thrown, wrapped in RetriesExhaustedError saying for how long and how often it was tried.
 *
 * Full jitter (a delay drawn uniformly below the cap) spreads many clients hitting one throttled endpoint instead of
 * retrying in lock-step. Time comes from an injected clock, so tests of a five-minute budget take milliseconds.
 */
import type { Readable } from 'node:stream';
import { realClock, type Clock } from '../../base/clock.js';
import { ForwardingObjectStore } from './forwarding.js';
import type { GetOptions, ObjectInfo, ObjectStore, PutOptions } from './types.js';
import { isRetryable, RetriesExhaustedError } from './errors.js';

/** How long one operation keeps being retried by default: longer than a store restart or fail-over takes. */
export const DEFAULT_RETRY_FOR_MS = 5 * 60_000;
/** First back-off cap: quick enough that a single dropped connection costs well under a second. */
export const DEFAULT_BASE_DELAY_MS = 500;
/** Largest back-off cap: an outage's end is noticed within this long. */
export const DEFAULT_MAX_DELAY_MS = 30_000;

export interface RetryEvent {
  /** The operation and key, e.g. "put data/ab/abcd…". */
  operation: string;
  /** The attempt that just failed (1 = the first call). */
  attempt: number;
  error: Error;
  /** How long until the next attempt. */
  delayMs: number;
  /** Time spent on this operation since its first failure. */
  elapsedMs: number;
}

export interface RetryOptions {
  /** How long to keep retrying one operation after its first failure (default 5 minutes); 0 = no retries. */
  retryForMs?: number;
  /** Back-off cap of the first retry; doubles per attempt up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Also stop after this many attempts in total (default: no limit but the time budget). */
  attempts?: number;
  clock?: Clock;
  /** Uniform in [0, 1): the jitter source (injectable for tests). */
  random?: () => number;
  /** Called before each wait (for a log line: "object store unreachable, retrying in 4 s"). */
  onRetry?: (event: RetryEvent) => void;
}

/** The retry policy on its own: runs an operation until it succeeds, fails permanently, or the budget is spent. */
export class RetryPolicy {
  readonly retryForMs: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly attempts: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly onRetry: ((event: RetryEvent) => void) | undefined;

  constructor(options: RetryOptions = {}) {
    this.retryForMs = options.retryForMs ?? DEFAULT_RETRY_FOR_MS;
    this.baseDelayMs = options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
    this.maxDelayMs = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
    this.attempts = options.attempts ?? Number.POSITIVE_INFINITY;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.onRetry = options.onRetry;
  }

  /** The wait before retry number `attempt` (1-based): full jitter under a doubling, capped ceiling. */
  delayFor(attempt: number): number {
    const cap = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.min(attempt - 1, 30));
    return this.random() * cap;
  }

  async run<T>(operation: string, op: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let firstFailure: number | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return await op();
      } catch (err) {
        if (!isRetryable(err) || signal?.aborted || this.retryForMs <= 0) throw err;
        const now = this.clock.now();
        firstFailure ??= now;
        const elapsedMs = now - firstFailure;
        const left = this.retryForMs - elapsedMs;
        if (left <= 0 || attempt >= this.attempts) throw new RetriesExhaustedError(err as Error, { attempts: attempt, elapsedMs });
        // The last wait is cut short so the final attempt falls inside the budget rather than after it.
        const delayMs = Math.min(this.delayFor(attempt), left);
        this.onRetry?.({ operation, attempt, error: err as Error, delayMs, elapsedMs });
        await this.clock.sleep(delayMs, signal);
      }
    }
  }
}

export class RetryingObjectStore extends ForwardingObjectStore {
  readonly policy: RetryPolicy;

  constructor(inner: ObjectStore, options: RetryOptions = {}) {
    super(inner);
    this.policy = new RetryPolicy(options);
  }

  override get(key: string, options?: GetOptions): Promise<Buffer> {
    return this.policy.run(`get ${key}`, () => this.inner.get(key, options), options?.signal);
  }
  override getStream(key: string, options?: { signal?: AbortSignal }): Promise<Readable> {
    return this.policy.run(`get ${key}`, () => this.inner.getStream(key, options), options?.signal);
  }
  override put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<void> {
    // A stream can be consumed only once, so only Buffer bodies are retried (the data path writes Buffers only).
    if (!Buffer.isBuffer(body)) return this.inner.put(key, body, options);
    return this.policy.run(`put ${key}`, () => this.inner.put(key, body, options), options?.signal);
  }
  override head(key: string): Promise<ObjectInfo | undefined> {
    return this.policy.run(`head ${key}`, () => this.inner.head(key));
  }
  override async *list(prefix: string, options?: { signal?: AbortSignal }): AsyncIterable<ObjectInfo> {
    // A failed listing restarts, skipping what was already yielded (keys come in ascending order). Each step has
    // its own budget, so a long listing that fails now and then still finishes.
    let last: string | undefined;
    let iterator: AsyncIterator<ObjectInfo> | undefined;
    const next = async (): Promise<IteratorResult<ObjectInfo>> => {
      for (;;) {
        iterator ??= this.inner.list(prefix, options)[Symbol.asyncIterator]();
        let step: IteratorResult<ObjectInfo>;
        try {
          step = await iterator.next();
        } catch (err) {
          iterator = undefined;
          throw err;
        }
        if (step.done || last === undefined || step.value.key > last) {
          if (!step.done) last = step.value.key;
          return step;
        }
      }
    };
    try {
      for (;;) {
        const step = await this.policy.run(`list ${prefix}`, next, options?.signal);
        if (step.done) return;
        yield step.value;
      }
    } finally {
      await iterator?.return?.();
    }
  }
  override listCommonPrefixes(prefix: string, delimiter?: string): Promise<string[]> {
    return this.policy.run(`list ${prefix}`, () => this.inner.listCommonPrefixes(prefix, delimiter));
  }
  override delete(key: string): Promise<void> {
    return this.policy.run(`delete ${key}`, () => this.inner.delete(key));
  }
}
