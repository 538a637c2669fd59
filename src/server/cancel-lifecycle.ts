/**
 * The steps a cancel takes that Backups and Restores share (their phases have the same names): a cancel requested of
 * one that runs moves it to Canceling; a Canceling one (or a New one asked to cancel) ends Canceled; and a Canceling
 * one waits for its volume operations to end, though not for ever. What each kind adds is in
 * ./backup/cancel-decisions.ts and ./restore/cancel-decisions.ts.
 */
import { CANCEL_REQUESTED_ANNOTATION, isCancelRequested, statusTime } from '../api/index.js';

interface CancelableObject {
  metadata?: { annotations?: Record<string, string> | undefined } | undefined;
  status?: { phase?: string | undefined; completionTimestamp?: string | null | undefined } | undefined;
}

/** What a reconcile does about a cancel, in the steps both kinds take. */
export type CancelStep =
  /** No cancel requested, or nothing left to cancel (finished, being deleted). */
  | { step: 'none' }
  /** Not started yet: Canceled at once, nothing was written. */
  | { step: 'end-new' }
  /** This process runs it: stop the run (it writes Canceling when it has stopped). */
  | { step: 'abort-run' }
  /** Nobody else will write it (waiting, finalizing, or left by a server that stopped): Canceling now. */
  | { step: 'begin' }
  /** Canceling: stop its volume operations, wait for them, clean up, Canceled. */
  | { step: 'cancel' };

const isNewPhase = (phase: string) => phase === '' || phase === 'New';

/**
 * The step both kinds decide the same way, or undefined for one that runs, not in this process, with a cancel
 * requested: each kind knows who else may be writing it. `cancelable`: its phases that may still be canceled.
 */
export function sharedCancelStep(obj: CancelableObject, o: { cancelable: ReadonlySet<string>; runningHere: boolean }): CancelStep | undefined {
  const phase = obj.status?.phase ?? '';
  if (phase === 'Canceling') return { step: 'cancel' };
  if (!isCancelRequested(obj) || !o.cancelable.has(phase)) return { step: 'none' };
  if (isNewPhase(phase)) return { step: 'end-new' };
  if (o.runningHere) return { step: 'abort-run' };
  return undefined;
}

/** Whether a cancel is requested of an object that started and has not finished (`cancelable`: its running phases). */
function canBeginCanceling(obj: CancelableObject, cancelable: ReadonlySet<string>): boolean {
  if (!isCancelRequested(obj)) return false;
  const phase = obj.status?.phase ?? '';
  return !isNewPhase(phase) && cancelable.has(phase);
}

/** Whether an object ends Canceled now: it is Canceling, or New with a cancel requested. */
function canEndCanceled(obj: CancelableObject): boolean {
  const phase = obj.status?.phase ?? '';
  return phase === 'Canceling' || (isNewPhase(phase) && isCancelRequested(obj));
}

/** When the cancel was requested (its annotation), or undefined when that is not a time. */
export function cancelRequestedAtMs(obj: CancelableObject): number | undefined {
  const ms = Date.parse(obj.metadata?.annotations?.[CANCEL_REQUESTED_ANNOTATION] ?? '');
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Moves a running object with a cancel requested to Canceling (false, nothing to write, otherwise); `forget` drops
 * from its annotations what would have a controller carry on with it.
 */
export function beginCancelingOf(obj: CancelableObject, cancelable: ReadonlySet<string>, forget: (annotations: Record<string, string>) => void): boolean {
  if (!canBeginCanceling(obj, cancelable)) return false;
  obj.metadata = obj.metadata ?? {};
  const annotations = { ...obj.metadata.annotations };
  forget(annotations);
  obj.metadata.annotations = annotations;
  obj.status = { ...obj.status, phase: 'Canceling' };
  return true;
}

/** Ends an object Canceled (false unless it is Canceling, or New with a cancel requested). */
export function endCanceledOf(obj: CancelableObject, now: Date): boolean {
  if (!canEndCanceled(obj)) return false;
  obj.status = { ...obj.status, phase: 'Canceled', completionTimestamp: statusTime(now) };
  return true;
}

export type CancelWaitStep =
  /** Some have not ended: look again after `requeueAfterMs`. */
  | { step: 'wait'; requeueAfterMs: number }
  /** All ended (or waited for too long: `gaveUp`). */
  | { step: 'done'; gaveUp: boolean };

/**
 * How a Canceling object waits for its `running` volume operations: done once none runs, or once `limitMs` have
 * passed since the cancel was requested (the node agents' watchdog ends theirs within an hour; one no node agent
 * looks at any more would otherwise hold it Canceling for ever).
 */
export function cancelWaitStep(running: number, o: { requestedAtMs: number | undefined; nowMs: number; limitMs: number; pollMs: number }): CancelWaitStep {
  if (running === 0) return { step: 'done', gaveUp: false };
  if (o.nowMs - (o.requestedAtMs ?? o.nowMs) >= o.limitMs) return { step: 'done', gaveUp: true };
  return { step: 'wait', requeueAfterMs: o.pollMs };
}
