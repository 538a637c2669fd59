/**
 * The data mover's life in its pod, free of Kubernetes so it can be tested with fakes: wait until the node-agent
 * has set the PVB/PVR InProgress (its watcher is running by then), report Started, run the data path with throttled
 * Progress events, react to a cancel request, report exactly one of Completed / Failed / Canceled and then Stopped,
 * and hand back the termination message. Events go out one after another and are all flushed before this returns,
 * so the watcher sees them in order and none is lost when the pod exits.
 */
import type { Logger } from '../../base/logger.js';
import { CANCELED_SUFFIX, EventReasons, messages, progressMessage, type EventReason, type TaskKind } from './protocol.js';

export interface EventSink {
  emit(reason: EventReason, message: string): Promise<void>;
}

export interface DataPathProgress {
  totalBytes: number;
  doneBytes: number;
}

export interface DataPathWork {
  /** Runs the transfer; resolves to the result JSON (the Completed message and the termination message). */
  run(ctx: { signal: AbortSignal; onProgress: (p: DataPathProgress) => void }): Promise<string>;
}

export interface RunDataPathOptions {
  kind: TaskKind;
  name: string;
  events: EventSink;
  logger: Logger;
  /** Resolves once the custom resource is InProgress; rejects on timeout or when it is gone. */
  waitUntilInProgress: (signal: AbortSignal) => Promise<void>;
  /** Calls `listener` once when spec.cancel turns true; returns an unsubscribe function. */
  onCancelRequested: (listener: () => void) => () => void;
  /** Opens what the work needs (repository, volume checks); a failure here is an init failure. */
  prepare: (signal: AbortSignal) => Promise<DataPathWork>;
  /** Minimum time between two Progress events (Velero throttles to 10 s). */
  progressIntervalMs: number;
  /**
   * Aborted when the process is told to stop (SIGTERM, the pod deleted): the transfer stops as it would on cancel,
   * releasing what it holds (the repository lock), and ends Failed with the abort reason as its message.
   */
  stop?: AbortSignal | undefined;
  now?: () => number;
}

export type DataPathOutcome = 'completed' | 'failed' | 'canceled';

export interface RunDataPathResult {
  outcome: DataPathOutcome;
  terminationMessage: string;
}

export async function runDataPath(opts: RunDataPathOptions): Promise<RunDataPathResult> {
  const { kind, name, logger } = opts;
  const now = opts.now ?? Date.now;
  const abort = new AbortController();
  let cancelRequested = false;
  let queue: Promise<void> = Promise.resolve();
  const emit = (reason: EventReason, message: string): Promise<void> => {
    queue = queue.then(() =>
      opts.events.emit(reason, message).catch((err: unknown) => {
        logger.warn({ reason, err: (err as Error).message }, 'could not record event');
      }),
    );
    return queue;
  };
  const unsubscribe = opts.onCancelRequested(() => {
    if (cancelRequested) return;
    cancelRequested = true;
    logger.info({ [kind]: name }, 'cancel requested');
    void emit(EventReasons.Canceling, messages.canceling(kind, name));
    abort.abort(new Error(CANCELED_SUFFIX));
  });
  let stopReason: string | undefined;
  const onStop = () => {
    stopReason ??= errorText(opts.stop?.reason ?? 'stopped');
    logger.warn({ [kind]: name, reason: stopReason }, 'stopping the data path');
    abort.abort(new Error(stopReason));
  };
  if (opts.stop?.aborted) onStop();
  else opts.stop?.addEventListener('abort', onStop, { once: true });
  const finish = async (outcome: DataPathOutcome, terminationMessage: string): Promise<RunDataPathResult> => {
    unsubscribe();
    opts.stop?.removeEventListener('abort', onStop);
    await emit(EventReasons.Stopped, messages.stopped(name));
    await queue;
    return { outcome, terminationMessage };
  };
  const canceled = async (): Promise<RunDataPathResult> => {
    await emit(EventReasons.Canceled, messages.canceled(kind, name));
    return finish('canceled', messages.runFailed(kind, name, CANCELED_SUFFIX));
  };

  try {
    await opts.waitUntilInProgress(abort.signal);
  } catch (err) {
    unsubscribe();
    opts.stop?.removeEventListener('abort', onStop);
    if (cancelRequested) return { outcome: 'canceled', terminationMessage: messages.runFailed(kind, name, CANCELED_SUFFIX) };
    return { outcome: 'failed', terminationMessage: messages.runFailed(kind, name, stopReason ?? errorText(err)) };
  }
  logger.info({ [kind]: name }, `${kind} is in progress; starting the data path`);

  let work: DataPathWork;
  try {
    work = await opts.prepare(abort.signal);
  } catch (err) {
    if (cancelRequested) return canceled();
    const text = stopReason ?? errorText(err);
    logger.error({ [kind]: name, err: text }, 'could not set up the data path');
    await emit(EventReasons.Failed, messages.failed(kind, name, text));
    return finish('failed', messages.initFailed(kind, name, text));
  }

  await emit(EventReasons.Started, messages.started(name));
  let lastProgressAt = Number.NEGATIVE_INFINITY;
  let lastDoneBytes = -1;
  const onProgress = (p: DataPathProgress) => {
    const t = now();
    // The final figure always goes out, so the last Progress a watcher sees is the whole volume.
    const isFinal = p.totalBytes > 0 && p.doneBytes === p.totalBytes && p.doneBytes !== lastDoneBytes;
    if (!isFinal && t - lastProgressAt < opts.progressIntervalMs) return;
    lastProgressAt = t;
    lastDoneBytes = p.doneBytes;
    void emit(EventReasons.Progress, progressMessage(p));
  };
  try {
    // A transfer that finished is reported as finished, even if a cancel arrived at the last moment.
    const result = await work.run({ signal: abort.signal, onProgress });
    logger.info({ [kind]: name }, 'data path completed');
    await emit(EventReasons.Completed, result);
    return finish('completed', result);
  } catch (err) {
    if (cancelRequested) {
      logger.info({ [kind]: name }, 'data path canceled');
      return canceled();
    }
    const text = stopReason ?? errorText(err);
    logger.error({ [kind]: name, err: text }, 'data path failed');
    await emit(EventReasons.Failed, messages.failed(kind, name, text));
    return finish('failed', messages.runFailed(kind, name, text));
  }
}

/** One line, no stack: errors reach Events and termination messages, which must stay short and secret-free. */
export function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}
