/**
 * Caps the bytes per second written to a store (restic's `--limit-upload`, kopia's upload throttle): for a backup
 * that must not fill a shared uplink. Reads, lists and deletes pass straight through.
 *
 * Pacing, not a token bucket with a burst: each put is started no earlier than the time the bytes before it needed
 * at the set rate, so a backup of N bytes takes about N / rate seconds whatever its pack sizes.
 */
import { Transform, type Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { ForwardingObjectStore } from './forwarding.js';
import type { ObjectStore, PutOptions } from './types.js';

export class InvalidUploadRateError extends Error {
  override name = 'InvalidUploadRateError';
}

/** Checks a configured rate: a whole number of bytes per second, at least 1. */
export function validUploadRate(value: number, where: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidUploadRateError(`${where} must be a whole number of bytes per second, at least 1 (got ${value})`);
  return value;
}

/** Hands out start times so that the bytes granted go out at no more than `bytesPerSecond`. */
export class BytePacer {
  /** When the bytes granted so far have had their time (ms on `now`'s clock). */
  private next = Number.NEGATIVE_INFINITY;

  constructor(
    readonly bytesPerSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** How long to wait before sending `bytes` (ms); the bytes are counted at once, so callers queue in call order. */
  reserve(bytes: number): number {
    const now = this.now();
    const start = Math.max(now, this.next);
    this.next = start + (bytes * 1000) / this.bytesPerSecond;
    return start - now;
  }

  async take(bytes: number, signal?: AbortSignal): Promise<void> {
    const waitMs = this.reserve(bytes);
    if (waitMs > 0) await delay(waitMs, undefined, signal ? { signal } : {});
  }
}

/** The store with its writes capped at `bytesPerSecond`, or the store itself when no cap is set. */
export function withUploadRate(store: ObjectStore, bytesPerSecond: number | undefined): ObjectStore {
  return bytesPerSecond ? new UploadRateLimitedObjectStore(store, bytesPerSecond) : store;
}

export class UploadRateLimitedObjectStore extends ForwardingObjectStore {
  private readonly pacer: BytePacer;

  constructor(inner: ObjectStore, bytesPerSecond: number) {
    super(inner);
    this.pacer = new BytePacer(validUploadRate(bytesPerSecond, 'the upload rate'));
  }

  override async put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<void> {
    if (Buffer.isBuffer(body)) {
      await this.pacer.take(body.length, options?.signal);
      return this.inner.put(key, body, options);
    }
    // A stream is paced chunk by chunk as the backend pulls it.
    const pacer = this.pacer;
    const signal = options?.signal;
    const paced = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        pacer.take(chunk.length, signal).then(() => callback(null, chunk), (err: unknown) => callback(err as Error));
      },
    });
    body.on('error', (err) => paced.destroy(err));
    return this.inner.put(key, body.pipe(paced), options);
  }
}
