/** What goes wrong talking to a plugin, said with the plugin's name and its own words. */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';

/** Base of every plugin failure; `plugin` is the plugin's name or binary, for messages and logs. */
export class PluginError extends Error {
  constructor(
    message: string,
    readonly plugin: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The binary did not start as a plugin (not executable, wrong handshake, exited at once). */
export class PluginStartError extends PluginError {}

/** The plugin's process ended while a call was in flight; the message carries what it last wrote to stderr. */
export class PluginExitedError extends PluginError {}

/** The plugin did not answer within the call's time limit. */
export class PluginTimeoutError extends PluginError {}

/** The plugin answered with an error: the message is the plugin's own. */
export class PluginCallError extends PluginError {
  constructor(
    message: string,
    plugin: string,
    readonly code: number,
    options?: { cause?: unknown },
  ) {
    super(message, plugin, options);
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return typeof err === 'object' && err !== null && 'code' in err && 'details' in err && typeof (err as { code: unknown }).code === 'number';
}

/**
 * A gRPC failure as a PluginError. Velero's plugin servers put the plugin's error text in the status message
 * (`details`), so that is what the user reads.
 */
export function fromGrpcError(err: unknown, plugin: string, method: string, timeoutMs: number): PluginError {
  if (err instanceof PluginError) return err;
  if (!isServiceError(err)) return new PluginError(`${plugin}: ${method}: ${(err as Error)?.message ?? String(err)}`, plugin, { cause: err });
  if (err.code === GrpcStatus.DEADLINE_EXCEEDED) {
    return new PluginTimeoutError(`plugin ${plugin} did not answer ${method} within ${Math.round(timeoutMs / 1000)}s`, plugin, { cause: err });
  }
  return new PluginCallError(err.details || err.message, plugin, err.code, { cause: err });
}
