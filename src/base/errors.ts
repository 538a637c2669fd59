/**
 * Typed errors and the exit codes they map to. Every command's catch() goes through `exitCodeFor`,
 * so scripts can rely on the codes documented in docs/cli.md.
 */
export const ExitCode = {
  /** The command did what was asked. */
  Ok: 0,
  /** What was asked did not succeed (a Failed backup, an unexpected error). */
  Failed: 1,
  /** Bad input: a flag, argument or file the user gave is wrong. Nothing was changed. */
  Usage: 2,
  /** The cluster could not be reached or no cluster is configured. */
  Cluster: 3,
  /** A named object does not exist. */
  NotFound: 4,
  /** Interrupted by the user (Ctrl-C). */
  Interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export class CairnError extends Error {
  readonly exitCode: ExitCode = ExitCode.Failed;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The user's input is wrong; `flag` names the flag or argument at fault. */
export class UsageError extends CairnError {
  override readonly exitCode = ExitCode.Usage;
  constructor(
    readonly flag: string | undefined,
    message: string,
  ) {
    super(flag ? `${flag}: ${message}` : message);
  }
}

export class ClusterError extends CairnError {
  override readonly exitCode = ExitCode.Cluster;
}

export class NotFoundError extends CairnError {
  override readonly exitCode = ExitCode.NotFound;
}

/** An operation ran to its end but its outcome was not success (e.g. a backup PartiallyFailed). */
export class OperationFailedError extends CairnError {
  override readonly exitCode = ExitCode.Failed;
}

export function exitCodeFor(err: unknown): ExitCode {
  return err instanceof CairnError ? err.exitCode : ExitCode.Failed;
}

/** A one-line message for any error, without a stack trace. */
export function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n').map((l) => l.trim()).filter(Boolean).join(' ');
}
