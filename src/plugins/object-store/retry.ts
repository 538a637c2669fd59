/**
 * Retries retryable failures (throttling, 5xx, resets) with exponential back-off and full jitter, so many clients
 * hitting one throttled endpoint spread out instead of retrying in lock-step. Non-retryable errors pass through at once.
 */
import type { Readable } from 'node:stream';
import type { GetOptions, ObjectInfo, ObjectStore, PutOptions, SignedUrlOptions } from './types.js';
import { isRetryable } from './errors.js';

export interface RetryOptions {
  /** Attempts in total, including the first. */
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export class RetryingObjectStore implements ObjectStore {
  readonly description: string;
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(
    private readonly inner: ObjectStore,
    options: RetryOptions = {},
  ) {
    this.description = inner.description;
    this.attempts = options.attempts ?? 6;
    this.baseDelayMs = options.baseDelayMs ?? 200;
    this.maxDelayMs = options.maxDelayMs ?? 10_000;
    if (inner.signedUrl) this.signedUrl = (key: string, o: SignedUrlOptions) => inner.signedUrl!(key, o);
  }

  signedUrl?: (key: string, options: SignedUrlOptions) => Promise<string | undefined>;

  private async retry<T>(op: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await op();
      } catch (err) {
        if (attempt >= this.attempts || !isRetryable(err) || signal?.aborted) throw err;
        const cap = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1));
        await sleep(Math.random() * cap, signal);
      }
    }
  }

  get(key: string, options?: GetOptions): Promise<Buffer> {
    return this.retry(() => this.inner.get(key, options), options?.signal);
  }
  getStream(key: string, options?: { signal?: AbortSignal }): Promise<Readable> {
    return this.retry(() => this.inner.getStream(key, options), options?.signal);
  }
  put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<void> {
    // A stream can be consumed only once, so only Buffer bodies are retried.
    if (!Buffer.isBuffer(body)) return this.inner.put(key, body, options);
    return this.retry(() => this.inner.put(key, body, options), options?.signal);
  }
  head(key: string): Promise<ObjectInfo | undefined> {
    return this.retry(() => this.inner.head(key));
  }
  async *list(prefix: string, options?: { signal?: AbortSignal }): AsyncIterable<ObjectInfo> {
    // Restart the listing after a failure, skipping what was already yielded (keys come in ascending order).
    let last: string | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        for await (const info of this.inner.list(prefix, options)) {
          if (last !== undefined && info.key <= last) continue;
          last = info.key;
          yield info;
        }
        return;
      } catch (err) {
        if (attempt >= this.attempts || !isRetryable(err)) throw err;
        await sleep(Math.random() * Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1)), options?.signal);
      }
    }
  }
  listCommonPrefixes(prefix: string, delimiter?: string): Promise<string[]> {
    return this.retry(() => this.inner.listCommonPrefixes(prefix, delimiter));
  }
  delete(key: string): Promise<void> {
    return this.retry(() => this.inner.delete(key));
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
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
  });
}
