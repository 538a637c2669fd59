/**
 * The decisions of the node-agent's data-path state machine (data-path-controller.ts carries them out), as pure
 * functions of what was observed: the CR as read now, the data-mover pod, the time, and what this instance
 * remembers (a watch it runs, a pod it made, when it first saw a cancel). Nothing here reads or writes the cluster,
 * so each decision is tested table by table in milliseconds (test/unit/agent/data-path-decisions.test.ts).
 */
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { matchesLabelSelector } from '../../api/label-selectors.js';
import { DataPathPhase, DataPathTerminalPhases } from '../../api/schema.js';
import type { LoadAffinity } from '../config.js';
import { unrecoverableReason } from '../exposer/hosting-pod.js';
import type { WatchOutcome } from '../watcher/microservice-watch.js';

/** What the controller reads and writes on a PVB, PVR, DU or DD. */
export interface DataPathObject extends KubernetesObject {
  spec: { cancel?: boolean | undefined };
  status?:
    | {
        phase?: string | undefined;
        message?: string | undefined;
        startTimestamp?: string | null | undefined;
        completionTimestamp?: string | null | undefined;
        acceptedTimestamp?: string | null | undefined;
        progress?: { totalBytes?: number | undefined; bytesDone?: number | undefined } | undefined;
      }
    | undefined;
}

export const TERMINAL_PHASES: ReadonlySet<string> = new Set(DataPathTerminalPhases);
export const phaseOf = (o: DataPathObject): string => o.status?.phase || DataPathPhase.New;
export const isTerminal = (o: DataPathObject): boolean => TERMINAL_PHASES.has(phaseOf(o));

/** A cancel not carried out within this long is forced (Velero's cancel watchdog): 1 h while running, else 5 min. */
export const CANCEL_DELAY_IN_PROGRESS_MS = 60 * 60_000;
export const CANCEL_DELAY_OTHERS_MS = 5 * 60_000;

/** Whether a cancel seen at `seenAt` has waited too long in `phase`. */
export function cancelOverdue(phase: string, seenAt: number, now: number): boolean {
  const limit = phase === DataPathPhase.InProgress || phase === DataPathPhase.Canceling ? CANCEL_DELAY_IN_PROGRESS_MS : CANCEL_DELAY_OTHERS_MS;
  return now - seenAt >= limit;
}

/**
 * Whether this node claims a New CR now (the kind decides); a claimed CR whose expose cannot work fails later. `fail`:
 * no node can take it, and it fails unclaimed with that message.
 */
export type AcceptDecision = { accept: true } | { accept: false; retryAfterMs?: number; why?: string; fail?: string };

/** How often a CR waiting on something is looked at again. */
export const REQUEUE_SOON_MS = 2000;
/** A CR waiting for room (node slots, the prepare queue) is looked at again this soon (or when a slot frees). */
export const REQUEUE_BUSY_MS = 5000;

/** The first decision of every reconcile: which road the CR takes. */
export type DataPathStep =
  /** The CR is gone: forget what this instance kept about it. */
  | { step: 'forget' }
  /** Not cairn's to run (a restic PVB, another data mover's DU). */
  | { step: 'ignore' }
  /** Completed, Failed or Canceled: clean up if this node ran it, then drop the finalizer. */
  | { step: 'finished'; cleanUp: boolean; removeFinalizer: boolean }
  /** Being deleted while running: mark it for cancel, so the data mover stops. */
  | { step: 'cancel-deleting' }
  | { step: 'add-finalizer' }
  /** A cancel that was not carried out in time: Canceled now. */
  | { step: 'force-cancel' }
  /** New and canceled before anyone claimed it. */
  | { step: 'cancel-new' }
  | { step: 'new' }
  /** Accepted or Prepared on this node. */
  | { step: 'prepare' }
  /** InProgress or Canceling on this node. */
  | { step: 'run' }
  /** Another node's, or a phase this controller does not act on. */
  | { step: 'none' };

export interface DataPathObservation<T extends DataPathObject> {
  obj: T | undefined;
  /** The kind says the CR is not cairn's. */
  ignored: boolean;
  /** This node. */
  node: string;
  /** The node working on the CR (the kind knows where it is recorded). */
  processingNode: string | undefined;
  finalizer: string;
  /** A data-mover pod of this CR is in this node's cache. */
  hostingPodCached: boolean;
  /** When this instance first saw spec.cancel on the CR (undefined: not canceled). */
  cancelSeenAt: number | undefined;
  now: number;
}

export function dataPathStep<T extends DataPathObject>(o: DataPathObservation<T>): DataPathStep {
  const obj = o.obj;
  if (!obj) return { step: 'forget' };
  if (o.ignored) return { step: 'ignore' };
  const phase = phaseOf(obj);
  const mine = phase !== DataPathPhase.New && o.processingNode === o.node;
  const hasFinalizer = obj.metadata?.finalizers?.includes(o.finalizer) === true;
  // The finalizer goes only after a clean-up, so a restart between the two still cleans up.
  if (isTerminal(obj)) return { step: 'finished', cleanUp: mine && (hasFinalizer || o.hostingPodCached), removeFinalizer: hasFinalizer };
  if (obj.metadata?.deletionTimestamp && !obj.spec.cancel) return { step: 'cancel-deleting' };
  if (!hasFinalizer && !obj.metadata?.deletionTimestamp) return { step: 'add-finalizer' };
  if (obj.spec.cancel && (phase === DataPathPhase.New || mine) && cancelOverdue(phase, o.cancelSeenAt ?? o.now, o.now)) return { step: 'force-cancel' };
  switch (phase) {
    case DataPathPhase.New:
      return obj.spec.cancel ? { step: 'cancel-new' } : { step: 'new' };
    case DataPathPhase.Accepted:
    case DataPathPhase.Prepared:
      return mine ? { step: 'prepare' } : { step: 'none' };
    case DataPathPhase.InProgress:
    case DataPathPhase.Canceling:
      return mine ? { step: 'run' } : { step: 'none' };
    default:
      return { step: 'none' };
  }
}

/** A New CR this node may claim: wait, take a slot and claim it, or fail it unclaimed. */
export type NewStep = { step: 'wait'; retryAfterMs?: number; why?: string } | { step: 'claim' } | { step: 'fail'; message: string };

export function newStep(o: { accept: AcceptDecision; exposeOnGoing: number; prepareQueueLength: number }): NewStep {
  if (!o.accept.accept) {
    if (o.accept.fail !== undefined) return { step: 'fail', message: o.accept.fail };
    return { step: 'wait', ...(o.accept.retryAfterMs !== undefined ? { retryAfterMs: o.accept.retryAfterMs } : {}), ...(o.accept.why ? { why: o.accept.why } : {}) };
  }
  if (o.prepareQueueLength > 0 && o.exposeOnGoing >= o.prepareQueueLength) return { step: 'wait', retryAfterMs: REQUEUE_BUSY_MS, why: 'prepare queue is full' };
  return { step: 'claim' };
}

/** An Accepted or Prepared CR of this node, one step. */
export type PrepareStep =
  /** spec.cancel: clean up, Canceled. */
  | { step: 'cancel' }
  /** Claimed but its pod is not there yet (an expose in steps, or a restart in between): carry on exposing. */
  | { step: 'expose' }
  /** Not Prepared within the prepare timeout: Failed. */
  | { step: 'timeout' }
  /** Its pod is gone or cannot run: mark it for cancel. */
  | { step: 'mark-cancel'; message: string }
  | { step: 'wait'; retryAfterMs: number }
  /** The pod runs: Accepted → Prepared. */
  | { step: 'prepared' }
  /** Prepared: follow the data mover, then InProgress (the data mover waits for it). */
  | { step: 'start' };

export function prepareStep(o: {
  obj: DataPathObject;
  pod: V1Pod | undefined;
  /** This instance made the pod (so its absence means it was deleted, not never made). */
  exposedHere: boolean;
  now: number;
  prepareTimeoutMs: number;
  /** `<namespace>/<name>` and the kind's short name, for messages. */
  ref: string;
  short: string;
}): PrepareStep {
  const { obj, pod } = o;
  const phase = phaseOf(obj);
  if (obj.spec.cancel) return { step: 'cancel' };
  const accepted = Date.parse(obj.status?.acceptedTimestamp ?? '');
  const timedOut = Number.isFinite(accepted) && o.now - accepted >= o.prepareTimeoutMs;
  if (!pod || pod.metadata?.deletionTimestamp) {
    if (phase === DataPathPhase.Accepted && !pod && !o.exposedHere) return timedOut ? { step: 'timeout' } : { step: 'expose' };
    return { step: 'mark-cancel', message: `Cancel ${o.short} because the exposing pod ${o.ref} is gone` };
  }
  const broken = unrecoverableReason(pod);
  if (broken) return { step: 'mark-cancel', message: `found a ${o.short} ${o.ref} with expose error: ${broken}. mark it as cancel` };
  if (timedOut) return { step: 'timeout' };
  if (pod.status?.phase !== 'Running') return { step: 'wait', retryAfterMs: REQUEUE_SOON_MS };
  return phase === DataPathPhase.Accepted ? { step: 'prepared' } : { step: 'start' };
}

/** An InProgress or Canceling CR of this node, one step. */
export type RunStep =
  /** The data mover succeeded and the kind's step before Completed is pending (DD: the PV re-bind). */
  | { step: 'before-completed' }
  /**
   * This instance's watch saw the data mover end and records the outcome (or has, and the CR read here is older):
   * nothing to do. Following the pod again would replay its end (its log re-emitted, the outcome recorded twice).
   */
  | { step: 'recording' }
  /** No watch and no pod (a restart after the pod went): the run is over. */
  | { step: 'pod-gone'; phase: typeof DataPathPhase.Canceled | typeof DataPathPhase.Failed }
  /** Follow the data mover if no watch does yet; move InProgress to Canceling if spec.cancel is set. */
  | { step: 'follow'; startWatch: boolean; canceling: boolean };

/** What this instance's watch of the CR's data mover is doing. */
export type WatchState = 'none' | 'following' | 'ended';

export function runStep(o: { obj: DataPathObject; beforeCompletedPending: boolean; watch: WatchState; podFound: boolean }): RunStep {
  const phase = phaseOf(o.obj);
  if (o.beforeCompletedPending) return { step: 'before-completed' };
  if (o.watch === 'ended') return { step: 'recording' };
  if (o.watch === 'none' && !o.podFound) return { step: 'pod-gone', phase: phase === DataPathPhase.Canceling ? DataPathPhase.Canceled : DataPathPhase.Failed };
  return { step: 'follow', startWatch: o.watch === 'none', canceling: phase === DataPathPhase.InProgress && o.obj.spec.cancel === true };
}

/** The final phase a finished data mover leads to, and the message it leaves (kept if one is there already). */
export type WatchEndStep =
  /** Record the success; the kind's step before Completed comes next. */
  | { step: 'before-completed' }
  /** Completed with the data mover's result. */
  | { step: 'complete' }
  | { step: 'finish'; phase: typeof DataPathPhase.Canceled | typeof DataPathPhase.Failed; message: string; keepMessage: boolean };

export function watchEndStep(outcome: WatchOutcome, o: { hasBeforeCompleted: boolean; failurePrefix: string }): WatchEndStep {
  if (outcome.outcome === 'completed') return o.hasBeforeCompleted ? { step: 'before-completed' } : { step: 'complete' };
  if (outcome.outcome === 'canceled') return { step: 'finish', phase: DataPathPhase.Canceled, message: outcome.message, keepMessage: true };
  return { step: 'finish', phase: DataPathPhase.Failed, message: `${o.failurePrefix}: ${outcome.message}`, keepMessage: false };
}

/** A CR that waits for a node matching the load affinity is looked at again this often. */
export const AFFINITY_WAIT_RETRY_MS = 5000;

/**
 * Whether this node may move a volume under the node agent's load affinity (`affinity`: the entry that applies to
 * the volume's storage class, config.ts): yes when none applies or this node's labels match it. Otherwise a node
 * that matches is left to take it; once it has waited the prepare timeout since its creation (no node matches, or
 * every one that does stayed busy), it fails unclaimed, as Velero's data-mover pod that no node can schedule fails
 * its prepare timeout.
 */
export function loadAffinityDecision(o: {
  affinity: LoadAffinity | undefined;
  nodeLabels: Readonly<Record<string, string>> | undefined;
  createdAt: Date | undefined;
  now: Date;
  prepareTimeoutMs: number;
}): AcceptDecision {
  if (!o.affinity || matchesLabelSelector(o.nodeLabels, o.affinity.nodeSelector)) return { accept: true };
  const scope = o.affinity.storageClass !== undefined ? ` for storage class ${o.affinity.storageClass}` : '';
  const why = `this node does not match the node agent's loadAffinity${scope}`;
  const waited = o.createdAt ? o.now.getTime() - o.createdAt.getTime() : 0;
  if (waited >= o.prepareTimeoutMs) {
    return { accept: false, why, fail: `no node matching the node agent's loadAffinity${scope} took it within the prepare timeout (${Math.round(o.prepareTimeoutMs / 1000)}s)` };
  }
  return { accept: false, retryAfterMs: AFFINITY_WAIT_RETRY_MS, why };
}
