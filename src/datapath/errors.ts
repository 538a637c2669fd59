/** Errors of the data path that callers (CLI, node agent) map to user-facing messages and exit codes. */

export class RepositoryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No repository at that location (no config object). */
export class RepositoryNotFoundError extends RepositoryError {}

/** A repository already exists where `init` was asked to create one. */
export class RepositoryExistsError extends RepositoryError {}

/** The password opens no key file. */
export class WrongPasswordError extends RepositoryError {
  constructor() {
    super('wrong password or no key file for it');
  }
}

/** Another command holds a conflicting lock. */
export class RepositoryLockedError extends RepositoryError {}

/** Data in the repository is missing, corrupted or fails authentication. */
export class RepositoryCorruptError extends RepositoryError {}

/** A snapshot ID (or prefix) that matches no snapshot, or more than one. */
export class SnapshotNotFoundError extends RepositoryError {}

/** The operation was cancelled through its AbortSignal. */
export class CancelledError extends RepositoryError {
  constructor() {
    super('cancelled');
  }
}
