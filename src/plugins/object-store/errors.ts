/** Errors every object-store backend throws, so callers need not know which backend they talk to. */

export class ObjectStoreError extends Error {
  /** True when retrying may help (throttling, 5xx, connection resets, timeouts). */
  readonly retryable: boolean;
  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.retryable = options.retryable;
  }
}

export class ObjectNotFoundError extends ObjectStoreError {
  constructor(readonly key: string) {
    super(`object ${key} not found`, { retryable: false });
  }
}

export function isNotFound(err: unknown): err is ObjectNotFoundError {
  return err instanceof ObjectNotFoundError;
}

export function isRetryable(err: unknown): boolean {
  return err instanceof ObjectStoreError && err.retryable;
}

/**
 * A transient failure that went on for longer than the retry budget: the last error, with how long and how often the
 * operation was tried. Not retryable any more (nobody above should start the wait over).
 */
export class RetriesExhaustedError extends ObjectStoreError {
  readonly attempts: number;
  readonly elapsedMs: number;
  constructor(last: Error, options: { attempts: number; elapsedMs: number }) {
    super(`${last.message} (still failing after ${options.attempts} attempts over ${formatSeconds(options.elapsedMs)})`, { retryable: false, cause: last });
    this.attempts = options.attempts;
    this.elapsedMs = options.elapsedMs;
  }
}

function formatSeconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}
