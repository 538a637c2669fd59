/**
 * The state machine every node-agent controller shares (docs/node-agent.md; DataUpload/DataDownload:
 * docs/data-mover.md), one instance per kind (PVB, PVR, DU, DD):
 *
 *   New → Accepted (this node claims it: optimistic-concurrency write, slot taken, expose started)
 *       → Prepared (data-mover pod Running) → InProgress (watcher started, startTimestamp)
 *       → [kind's step before Completed, e.g. the DD's PV re-bind] → Completed | Failed | Canceling → Canceled
 *
 * What differs between the kinds sits behind DataPathKindSpec: which CRs a node claims, how the data-mover pod is
 * exposed (fs-backup: a host path; DU: a snapshot restored into a PVC; DD: a new PVC) and cleaned up, the finalizer,
 * what a completion records, and an optional resumable step between the data mover's success and Completed.
 *
 * Every step is decided from the object as read now, so a restarted node-agent picks each CR up where it stands:
 * an InProgress CR gets a new watcher on its existing pod (or fails with a reason when the pod is gone). spec.cancel
 * is honoured in every phase. Status is written only through the custom client's read-mutate-write helpers; the
 * one exception is the claim, which must fail on conflict instead of retrying (another node or instance won).
 *
 * The decisions are pure functions in data-path-decisions.ts; this file carries them out.
 */
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { Labels, LabelValues } from '../../api/constants.js';
import { DataPathPhase } from '../../api/schema.js';
import { statusTime } from '../../api/time.js';
import { realTimerClock, type TimerClock } from '../../base/clock.js';
import type { Logger } from '../../base/logger.js';
import { throttledWriter, type ThrottledWriter } from '../../base/throttle.js';
import { call, retryTransient, type Kube } from '../../kube/client.js';
import { startCustomController, type ObjectKey, type ReconcileResult, type RunningController } from '../../kube/controller.js';
import type { CustomClient, ResourceKind } from '../../kube/custom.js';
import type { WatchEventType } from '../../kube/informer.js';
import { isConflict, isNotFound } from '../../kube/errors.js';
import type { LoadAffinity } from '../config.js';
import type { DataPathKind } from '../exposer/hosting-pod.js';
import type { ResultMessage, TaskKind } from '../microservice/protocol.js';
import type { NodeSlots } from '../slots.js';
import type { Hub } from '../watcher/hub.js';
import { mergeLog } from '../watcher/log-merge.js';
import { MicroServiceWatch, byResourceVersion, type WatchOutcome, type WatchProgress } from '../watcher/microservice-watch.js';
import {
  REQUEUE_BUSY_MS,
  REQUEUE_SOON_MS,
  dataPathStep,
  isTerminal,
  newStep,
  phaseOf,
  prepareStep,
  runStep,
  watchEndStep,
  type AcceptDecision,
  type DataPathObject,
  type WatchState,
} from './data-path-decisions.js';


/** How far an expose got: `ready` once the data-mover pod exists; otherwise it is called again. Throwing fails the CR. */
export type ExposeProgress = { ready: true } | { ready: false; why: string };

/** One turn of the kind's step between the data mover's success and Completed. */
export type BeforeCompletedStep =
  | { outcome: 'done' }
  | { outcome: 'wait'; why: string; retryAfterMs?: number }
  | { outcome: 'failed'; message: string }
  | { outcome: 'canceled'; message: string };

/**
 * Work between the data mover's success and Completed (DD: the PV re-bind), resumable: `begin` records on the CR
 * that the data mover succeeded (the pod may be deleted afterwards), `pending` reads that record back, `step` moves
 * on from the observed state and is called until it is done, failed or canceled.
 */
export interface BeforeCompleted<T extends DataPathObject> {
  begin(obj: T, result: ResultMessage): Promise<void>;
  pending(obj: T): boolean;
  step(obj: T): Promise<BeforeCompletedStep>;
}

/** What differs between the kinds. */
export interface DataPathKindSpec<T extends DataPathObject> {
  kind: DataPathKind;
  short: TaskKind;
  resource: ResourceKind;
  client: CustomClient<T>;
  /** The finalizer the node-agent keeps on the CR until it has cleaned up after it. */
  finalizer: string;
  /** CRs that are not cairn's to run (a restic PVB, a DU of another data mover): left alone entirely. */
  ignored(obj: T): boolean;
  /** Fields naming what the CR is about, for the log. */
  describe(obj: T): Record<string, unknown>;
  /** The node that works on an accepted CR (PVB: spec.node; PVR, DU, DD: status.node). */
  processingNode(obj: T): string | undefined;
  /** Whether this node should claim a New CR now. */
  acceptDecision(obj: T): Promise<AcceptDecision>;
  /** Extra status set when this node claims the CR (PVR: status.node; DU/DD: node, acceptedByNode). */
  onAccepted?(obj: T, node: string): void;
  /** Creates (idempotently, resumably) what the data mover needs, the pod last. */
  expose(obj: T): Promise<ExposeProgress>;
  /** The data-mover pod, if it exists. */
  getExposed(name: string): Promise<V1Pod | undefined>;
  /** Removes every object the expose made; tolerates their absence. */
  cleanUp(obj: T): Promise<void>;
  /** Status fields of a completed data path (PVB/DU: path, snapshotID...). */
  onCompleted(obj: T, result: ResultMessage): void;
  beforeCompleted?: BeforeCompleted<T>;
  /** `data path backup failed` / `data path restore failed`. */
  failurePrefix: string;
}

export interface DataPathControllerContext {
  kube: Kube;
  namespace: string;
  nodeName: string;
  logger: Logger;
  events: Hub<CoreV1Event>;
  hostingPods: Hub<V1Pod>;
  slots: NodeSlots;
  /** Cluster-wide count of CRs labelled expose-on-going, and its bound (0 = none). */
  exposeOnGoing: () => number;
  prepareQueueLength: number;
  prepareTimeoutMs: number;
  eventWaitMs: number;
  progressWriteIntervalMs: number;
  /** Time, and the timers of the progress throttle and the watcher (tests drive it). */
  clock?: TimerClock;
  /** The node agent's load affinity (ConfigMap `loadAffinity`) and this node's labels, for snapshot data movement. */
  loadAffinity?: readonly LoadAffinity[];
  nodeLabels?: Readonly<Record<string, string>>;
  /** Told of every watch event of the kind's CRs (the node's metrics); absent in tests. */
  observe?: (kind: DataPathKind, type: WatchEventType, obj: DataPathObject) => void;
}

export interface DataPathController<T extends DataPathObject> {
  /** One reconcile of one CR (what the controller's queue runs; tests call it directly). */
  reconcile(key: ObjectKey): Promise<ReconcileResult | void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  enqueue(key: ObjectKey): void;
  /** Resolves when every queued reconcile has run once (the initial resume pass). */
  idle(): Promise<void>;
  cached(): T[];
}

/** An expose waiting on something outside (a snapshot becoming ready) looks again this soon. */
const EXPOSE_RETRY_MS = 1000;

interface ActiveWatch {
  watch: MicroServiceWatch;
  progress: ThrottledWriter<WatchProgress>;
  unsubscribe: () => void;
  /**
   * The data mover ended and its outcome is being recorded, or was: the entry stays until a reconcile reads the CR
   * finished (or the record fails), so a reconcile that read the CR before the record never follows the pod again.
   */
  ended: boolean;
}

export function createDataPathController<T extends DataPathObject>(spec: DataPathKindSpec<T>, ctx: DataPathControllerContext): DataPathController<T> {
  const log = ctx.logger.child({ controller: spec.kind });
  const clock = ctx.clock ?? realTimerClock;
  const now = () => new Date(clock.now());
  const watches = new Map<string, ActiveWatch>();
  /** CRs whose pod this instance created: their pod missing later means it was deleted, not never made. */
  const exposedHere = new Set<string>();
  /** When this instance first saw spec.cancel on a CR that is not finished yet. */
  const cancelSeen = new Map<string, number>();
  const slotKey = (name: string) => `${spec.short}/${name}`;
  let controller: RunningController<T> | undefined;

  const update = (name: string, mutate: (o: T) => boolean | void) => spec.client.update(ctx.namespace, name, mutate);

  /** Claims a New CR for this node: a write conditioned on the resourceVersion that was read. */
  async function claim(obj: T): Promise<T | undefined> {
    const body = structuredClone(obj);
    const stamp = statusTime(now());
    body.status = { ...(body.status ?? {}), phase: DataPathPhase.Accepted, acceptedTimestamp: stamp };
    body.metadata = { ...body.metadata, labels: { ...(body.metadata?.labels ?? {}), [Labels.ExposeOnGoing]: LabelValues.True } };
    spec.onAccepted?.(body, ctx.nodeName);
    try {
      const written = await ctx.kube.custom.replaceNamespacedCustomObject({
        group: spec.resource.group,
        version: spec.resource.version,
        plural: spec.resource.plural,
        namespace: ctx.namespace,
        name: obj.metadata?.name ?? '',
        body,
      });
      return written as T;
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return undefined;
      throw err;
    }
  }

  async function finish(name: string, phase: typeof DataPathPhase.Completed | typeof DataPathPhase.Failed | typeof DataPathPhase.Canceled, mutate?: (o: T) => void): Promise<void> {
    let wrote = false;
    await retryTransient(() =>
      update(name, (o) => {
        wrote = false;
        if (isTerminal(o)) return false;
        wrote = true;
        const stamp = statusTime(now());
        o.status = { ...(o.status ?? {}), phase, completionTimestamp: stamp };
        if (!o.status.startTimestamp && phase !== DataPathPhase.Completed) o.status.startTimestamp = stamp;
        if (o.metadata?.labels) delete o.metadata.labels[Labels.ExposeOnGoing];
        mutate?.(o);
      }),
    );
    ctx.slots.release(slotKey(name));
    // Logged by the write that made it so: a CR already finished (by another path, or an earlier turn) stays quiet.
    if (wrote) log.info({ [spec.short]: name, phase }, `${spec.short} ${phase}`);
  }

  /** Fails a CR no node has claimed (a node that claims it meanwhile wins: the write is made only while it is New). */
  async function failUnclaimed(name: string, message: string): Promise<void> {
    let wrote = false;
    await retryTransient(() =>
      update(name, (o) => {
        wrote = false;
        if (phaseOf(o) !== DataPathPhase.New) return false;
        wrote = true;
        const stamp = statusTime(now());
        o.status = { ...(o.status ?? {}), phase: DataPathPhase.Failed, message, startTimestamp: stamp, completionTimestamp: stamp };
      }),
    );
    if (wrote) log.warn({ [spec.short]: name, reason: message }, `${spec.short} ${DataPathPhase.Failed}`);
  }

  async function markCancel(name: string, message: string): Promise<void> {
    await update(name, (o) => {
      if (isTerminal(o) || o.spec.cancel) return false;
      o.spec.cancel = true;
      o.status = { ...(o.status ?? {}), message };
    });
    log.info({ [spec.short]: name, reason: message }, 'marked for cancel');
  }

  async function collectLogs(pod: V1Pod | undefined, container: string): Promise<void> {
    const name = pod?.metadata?.name;
    if (!name) return;
    try {
      const text = await ctx.kube.core.readNamespacedPodLog({ namespace: ctx.namespace, name, container });
      mergeLog(ctx.logger, `${name}/${container}`, typeof text === 'string' ? text : String(text));
    } catch (err) {
      log.warn({ pod: name, err: (err as Error).message }, 'could not collect the data mover log');
    }
  }

  function stopWatch(name: string): void {
    const w = watches.get(name);
    if (!w) return;
    w.unsubscribe();
    w.watch.close();
    void w.progress.stop();
    watches.delete(name);
  }

  /** The CR as read now, for a clean-up or a step that needs all of it. */
  const read = (name: string) => spec.client.get(ctx.namespace, name);

  async function cleanUpNamed(name: string): Promise<void> {
    const obj = await read(name);
    if (obj) await spec.cleanUp(obj);
  }

  /**
   * Records what the data mover's end means for the CR. The ended watch stays registered meanwhile and afterwards
   * (runStep: `recording`), so no reconcile follows the finished pod again; only a failed record drops it, and the
   * reconcile that retries follows the pod again to learn the outcome anew.
   */
  async function onWatchEnd(name: string, uid: string, outcome: WatchOutcome): Promise<void> {
    const pod = ctx.hostingPods.cached(name)[0];
    await collectLogs(pod, uid);
    const end = watchEndStep(outcome, { hasBeforeCompleted: spec.beforeCompleted !== undefined, failurePrefix: spec.failurePrefix });
    if (end.step === 'before-completed' && outcome.outcome === 'completed') {
      try {
        const obj = await read(name);
        if (obj && !isTerminal(obj)) {
          await spec.beforeCompleted?.begin(obj, outcome.result);
          log.info({ [spec.short]: name }, 'data mover succeeded; finishing before Completed');
        }
      } catch (err) {
        log.error({ [spec.short]: name, err: (err as Error).message }, 'could not record the data mover success; will retry');
        stopWatch(name);
      }
      // The reconcile reads the recorded success (beforeCompleted.pending) and takes the step before Completed.
      controller?.enqueue({ namespace: ctx.namespace, name });
      return;
    }
    try {
      if (end.step === 'complete' && outcome.outcome === 'completed') {
        await finish(name, DataPathPhase.Completed, (o) => {
          o.status = { ...(o.status ?? {}), progress: { totalBytes: outcome.result.totalBytes, bytesDone: outcome.result.totalBytes } };
          spec.onCompleted(o, outcome.result);
        });
      } else if (end.step === 'finish') {
        await finish(name, end.phase, (o) => {
          o.status = { ...(o.status ?? {}), message: (end.keepMessage && o.status?.message) || end.message };
        });
      }
      await cleanUpNamed(name);
    } catch (err) {
      log.error({ [spec.short]: name, err: (err as Error).message }, 'could not record the data path result; will retry');
      stopWatch(name);
      controller?.enqueue({ namespace: ctx.namespace, name });
    }
  }

  /** Starts following the data mover of `obj` (its pod must exist). */
  function startWatch(obj: T, pod: V1Pod): void {
    const name = obj.metadata?.name ?? '';
    const uid = obj.metadata?.uid ?? '';
    if (watches.has(name)) return;
    // Progress is written at most once per interval, the latest value each time.
    const progress = throttledWriter<WatchProgress>({
      intervalMs: ctx.progressWriteIntervalMs,
      sinceLastWrite: true,
      clock,
      write: (p) =>
        update(name, (o) => {
          const phase = phaseOf(o);
          if (phase !== DataPathPhase.InProgress && phase !== DataPathPhase.Canceling) return false;
          const cur = o.status?.progress;
          if (cur?.totalBytes === p.totalBytes && cur.bytesDone === p.bytesDone) return false;
          o.status = { ...(o.status ?? {}), progress: { totalBytes: p.totalBytes, bytesDone: p.bytesDone } };
        }),
      onError: (err) => log.debug({ [spec.short]: name, err: (err as Error).message }, 'progress not written'),
    });
    const watch = new MicroServiceWatch({
      podRef: `${ctx.namespace}/${name}`,
      container: uid,
      eventWaitMs: ctx.eventWaitMs,
      onLog: (fields, msg) => log.debug({ [spec.short]: name, ...fields }, msg),
      onProgress: (p) => progress.report(p),
      setTimer: (fn, ms) => clock.setTimeout(fn, ms),
      onEnd: (outcome) => {
        void progress.stop();
        const active = watches.get(name);
        if (active?.watch === watch) {
          active.ended = true;
          // The pod and its Events have nothing more to tell this watch.
          active.unsubscribe();
        }
        log.info({ [spec.short]: name, outcome: outcome.outcome, ...(outcome.outcome !== 'completed' ? { message: outcome.message } : {}) }, 'data mover finished');
        void onWatchEnd(name, uid, outcome);
      },
    });
    const unsubEvents = ctx.events.subscribe(`${spec.kind}/${name}`, (_type, ev) => watch.onEvent(ev));
    const unsubPod = ctx.hostingPods.subscribe(name, (type, p) => watch.onPod(type === 'delete' ? undefined : p));
    let subscribed = true;
    watches.set(name, {
      watch,
      progress,
      ended: false,
      unsubscribe: () => {
        if (!subscribed) return;
        subscribed = false;
        unsubEvents();
        unsubPod();
      },
    });
    // What happened before this watch existed (a resumed node-agent): the cached Events in write order, then the pod.
    for (const ev of byResourceVersion(ctx.events.cached(`${spec.kind}/${name}`))) watch.onEvent(ev);
    watch.onPod(pod);
  }

  /** One turn of the expose; requeues until the pod exists, fails the CR when the expose cannot work. */
  async function expose(obj: T): Promise<ReconcileResult | void> {
    const name = obj.metadata?.name ?? '';
    try {
      const progress = await spec.expose(obj);
      if (progress.ready) exposedHere.add(name);
      else {
        log.debug({ [spec.short]: name, why: progress.why }, 'expose in progress');
        return { requeueAfterMs: EXPOSE_RETRY_MS };
      }
    } catch (err) {
      const message = `error to expose ${spec.short}: ${(err as Error).message}`;
      log.warn({ [spec.short]: name, err: (err as Error).message }, 'expose failed');
      await spec.cleanUp(obj).catch(() => undefined);
      await finish(name, DataPathPhase.Failed, (o) => {
        o.status = { ...(o.status ?? {}), message };
      });
      return;
    }
    return { requeueAfterMs: REQUEUE_SOON_MS };
  }

  async function failPrepareTimeout(obj: T, pod: V1Pod | undefined): Promise<void> {
    const name = obj.metadata?.name ?? '';
    log.warn(
      { [spec.short]: name, podPhase: pod?.status?.phase ?? 'not created', conditions: pod?.status?.conditions?.map((c) => `${c.type}=${c.status}`).join(',') },
      `[Diagnose ${spec.short} expose] timeout on preparing`,
    );
    await spec.cleanUp(obj);
    await finish(name, DataPathPhase.Failed, (o) => {
      o.status = { ...(o.status ?? {}), message: `timeout on preparing ${spec.short}` };
    });
  }

  async function reconcileNew(obj: T): Promise<ReconcileResult | void> {
    const name = obj.metadata?.name ?? '';
    const next = newStep({ accept: await spec.acceptDecision(obj), exposeOnGoing: ctx.exposeOnGoing(), prepareQueueLength: ctx.prepareQueueLength });
    if (next.step === 'wait') {
      if (next.why) log.debug({ [spec.short]: name, why: next.why }, 'not accepting yet');
      return next.retryAfterMs !== undefined ? { requeueAfterMs: next.retryAfterMs } : undefined;
    }
    if (next.step === 'fail') return failUnclaimed(name, next.message);
    const key = slotKey(name);
    if (!ctx.slots.tryAcquire(key)) {
      log.debug({ [spec.short]: name, limit: ctx.slots.limit }, 'node concurrency limit reached');
      return { requeueAfterMs: REQUEUE_BUSY_MS };
    }
    let claimed: T | undefined;
    try {
      claimed = await claim(obj);
    } catch (err) {
      ctx.slots.release(key);
      throw err;
    }
    if (!claimed) {
      ctx.slots.release(key);
      log.debug({ [spec.short]: name }, 'claim lost (changed meanwhile); re-reading');
      return;
    }
    log.info({ [spec.short]: name, ...spec.describe(obj) }, `${spec.short} accepted`);
    return expose(claimed);
  }

  async function reconcilePreparing(obj: T): Promise<ReconcileResult | void> {
    const name = obj.metadata?.name ?? '';
    ctx.slots.hold(slotKey(name));
    const pod = obj.spec.cancel ? undefined : await spec.getExposed(name);
    const next = prepareStep({ obj, pod, exposedHere: exposedHere.has(name), now: clock.now(), prepareTimeoutMs: ctx.prepareTimeoutMs, ref: `${ctx.namespace}/${name}`, short: spec.short });
    switch (next.step) {
      case 'cancel':
        await spec.cleanUp(obj);
        await finish(name, DataPathPhase.Canceled);
        return;
      case 'expose':
        return expose(obj);
      case 'timeout':
        await failPrepareTimeout(obj, pod);
        return;
      case 'mark-cancel':
        await markCancel(name, next.message);
        return;
      case 'wait':
        return { requeueAfterMs: next.retryAfterMs };
      case 'prepared':
        await update(name, (o) => {
          if (phaseOf(o) !== DataPathPhase.Accepted) return false;
          o.status = { ...(o.status ?? {}), phase: DataPathPhase.Prepared };
        });
        log.info({ [spec.short]: name }, `${spec.short} prepared`);
        return;
      case 'start': {
        // Follow the data mover first, then let it start (it waits for InProgress).
        startWatch(obj, pod!);
        const written = await update(name, (o) => {
          if (phaseOf(o) !== DataPathPhase.Prepared) return false;
          o.status = { ...(o.status ?? {}), phase: DataPathPhase.InProgress, startTimestamp: statusTime(now()) };
          if (o.metadata?.labels) delete o.metadata.labels[Labels.ExposeOnGoing];
        });
        if (written && phaseOf(written) === DataPathPhase.InProgress) log.info({ [spec.short]: name }, `${spec.short} in progress`);
        return;
      }
    }
  }

  /** The kind's step between the data mover's success and Completed, one turn. */
  async function reconcileBeforeCompleted(obj: T, before: BeforeCompleted<T>): Promise<ReconcileResult | void> {
    const name = obj.metadata?.name ?? '';
    const step = await before.step(obj);
    switch (step.outcome) {
      case 'done':
        await finish(name, DataPathPhase.Completed);
        await spec.cleanUp(obj);
        return;
      case 'failed':
        log.warn({ [spec.short]: name, reason: step.message }, `${spec.short} failed after its data was moved`);
        await spec.cleanUp(obj);
        await finish(name, DataPathPhase.Failed, (o) => {
          o.status = { ...(o.status ?? {}), message: step.message };
        });
        return;
      case 'canceled':
        await spec.cleanUp(obj);
        await finish(name, DataPathPhase.Canceled, (o) => {
          o.status = { ...(o.status ?? {}), message: o.status?.message || step.message };
        });
        return;
      case 'wait':
        log.debug({ [spec.short]: name, why: step.why }, 'waiting before Completed');
        return { requeueAfterMs: step.retryAfterMs ?? REQUEUE_SOON_MS };
    }
  }

  async function reconcileRunning(obj: T): Promise<ReconcileResult | void> {
    const name = obj.metadata?.name ?? '';
    ctx.slots.hold(slotKey(name));
    const pending = spec.beforeCompleted?.pending(obj) === true;
    const active = watches.get(name);
    const watch: WatchState = !active ? 'none' : active.ended ? 'ended' : 'following';
    const pod = pending || watch !== 'none' ? undefined : await spec.getExposed(name);
    const next = runStep({ obj, beforeCompletedPending: pending, watch, podFound: pod !== undefined });
    if (next.step === 'before-completed') {
      stopWatch(name);
      return reconcileBeforeCompleted(obj, spec.beforeCompleted!);
    }
    if (next.step === 'recording') return;
    if (next.step === 'pod-gone') {
      await finish(name, next.phase, (o) => {
        if (next.phase === DataPathPhase.Failed) o.status = { ...(o.status ?? {}), message: `${spec.failurePrefix}: data-mover pod ${ctx.namespace}/${name} is gone` };
      });
      return;
    }
    if (next.startWatch && pod) {
      log.info({ [spec.short]: name, phase: phaseOf(obj) }, 'following the running data mover');
      startWatch(obj, pod);
    }
    if (next.canceling) {
      // The data mover sees spec.cancel itself and stops; the watcher then reports Canceled.
      await update(name, (o) => {
        if (phaseOf(o) !== DataPathPhase.InProgress) return false;
        o.status = { ...(o.status ?? {}), phase: DataPathPhase.Canceling };
      });
      log.info({ [spec.short]: name }, `${spec.short} canceling`);
    }
  }

  /** Forgets what this instance kept about a CR that is gone or finished. */
  function forget(name: string): void {
    cancelSeen.delete(name);
    exposedHere.delete(name);
    stopWatch(name);
    ctx.slots.release(slotKey(name));
  }

  async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    if (key.namespace !== ctx.namespace) return;
    const name = key.name;
    const obj = await spec.client.get(key.namespace, name);
    const nowMs = clock.now();
    if (obj?.spec.cancel && !isTerminal(obj)) cancelSeen.set(name, cancelSeen.get(name) ?? nowMs);
    const next = dataPathStep({
      obj,
      ignored: obj !== undefined && spec.ignored(obj),
      node: ctx.nodeName,
      processingNode: obj ? spec.processingNode(obj) : undefined,
      finalizer: spec.finalizer,
      hostingPodCached: ctx.hostingPods.cached(name).length > 0,
      cancelSeenAt: cancelSeen.get(name),
      now: nowMs,
    });
    switch (next.step) {
      case 'forget':
        forget(name);
        return;
      case 'ignore':
      case 'none':
        return;
      case 'finished':
        forget(name);
        if (next.cleanUp) await spec.cleanUp(obj!);
        if (next.removeFinalizer) {
          await spec.client.update(ctx.namespace, name, (o) => {
            const f = o.metadata?.finalizers ?? [];
            if (!f.includes(spec.finalizer)) return false;
            o.metadata = { ...o.metadata, finalizers: f.filter((x) => x !== spec.finalizer) };
          });
        }
        return;
      case 'cancel-deleting':
        await markCancel(name, `Cancel ${spec.short} because it is being deleted`);
        return;
      case 'add-finalizer':
        await spec.client.update(ctx.namespace, name, (o) => {
          const f = o.metadata?.finalizers ?? [];
          if (f.includes(spec.finalizer) || isTerminal(o)) return false;
          o.metadata = { ...o.metadata, finalizers: [...f, spec.finalizer] };
        });
        return;
      case 'force-cancel':
        log.warn({ [spec.short]: name, phase: phaseOf(obj!) }, 'cancel was not carried out in time; forcing Canceled');
        stopWatch(name);
        await spec.cleanUp(obj!);
        await finish(name, DataPathPhase.Canceled);
        return;
      case 'cancel-new':
        await finish(name, DataPathPhase.Canceled);
        return;
      case 'new':
        return reconcileNew(obj!);
      case 'prepare':
        return reconcilePreparing(obj!);
      case 'run':
        return reconcileRunning(obj!);
    }
  }

  // A slot given back lets the next waiting CR go now rather than at its next requeue.
  ctx.slots.onFree(() => {
    for (const o of controller?.watch.list() ?? []) {
      if (phaseOf(o) === DataPathPhase.New && !o.spec.cancel) controller?.enqueue({ namespace: ctx.namespace, name: o.metadata?.name ?? '' });
    }
  });

  return {
    reconcile,
    async start() {
      controller = await startCustomController<T>(ctx, spec.client, {
        name: spec.kind,
        reconcile: (key) => call(ctx.kube, `reconcile ${spec.short} ${key.name}`, () => reconcile(key)),
        // Accepted CRs wait on time (prepare timeout) as well as on their pod.
        resyncMs: 60_000,
        ...(ctx.observe ? { onEvent: (type: WatchEventType, obj: T) => ctx.observe?.(spec.kind, type, obj) } : {}),
      });
    },
    async stop() {
      for (const name of [...watches.keys()]) stopWatch(name);
      await controller?.stop();
    },
    enqueue: (key) => controller?.enqueue(key),
    idle: () => controller?.queue.idle() ?? Promise.resolve(),
    cached: () => controller?.watch.list() ?? [],
  };
}
