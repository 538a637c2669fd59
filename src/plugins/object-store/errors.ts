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
