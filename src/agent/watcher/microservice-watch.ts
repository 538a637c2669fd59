/**
 * The node-agent's view of one data-mover pod (docs/microservice.md), free of Kubernetes so it can be tested
 * with fakes. Two sources are combined: the Events the data mover records on its PVB/PVR (progress, Started,
 * Completed, Stopped...) and the hosting pod's phase and termination message. Events arrive as creates and updates
 * (a repeated reason updates one Event); each (Event, resourceVersion) is handled once and stale updates are dropped.
 * Once the pod has ended, the outcome is reported when the data mover's last Event (Stopped) has been seen or a
 * bounded wait has passed, so no progress or result is lost to a slow watch. When both the Completed Event and the
 * termination message carry a result, they must agree.
 */
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { CANCELED_SUFFIX, EventReasons, type BackupResultMessage, type ResultMessage } from '../microservice/protocol.js';

export interface WatchProgress {
  totalBytes: number;
  bytesDone: number;
}

export type WatchOutcome =
  | { outcome: 'completed'; result: ResultMessage }
  | { outcome: 'failed'; message: string }
  | { outcome: 'canceled'; message: string };

export interface MicroServiceWatchOptions {
  /** `<namespace>/<name>` of the hosting pod, for messages. */
  podRef: string;
  /** The data-mover container (named after the CR's UID). */
  container: string;
  onProgress: (p: WatchProgress) => void;
  onEnd: (o: WatchOutcome) => void;
  /** How long to wait for the remaining Events once the pod has ended (Velero: 1 min). */
  eventWaitMs: number;
  onLog?: (fields: Record<string, unknown>, msg: string) => void;
  setTimer?: (fn: () => void, ms: number) => { cancel(): void };
}

/** How long to wait for the Events of a data mover that ended without ever reporting Started. */
export const NOT_STARTED_EVENT_WAIT_MS = 3000;

const defaultTimer = (fn: () => void, ms: number) => {
  const t = setTimeout(fn, ms);
  t.unref();
  return { cancel: () => clearTimeout(t) };
};

function rv(e: { metadata?: { resourceVersion?: string | undefined } | undefined }): bigint {
  try {
    return BigInt(e.metadata?.resourceVersion ?? '0');
  } catch {
    return 0n;
  }
}

/** Orders Events the way the API server wrote them (resourceVersion), for replaying a cache. */
export function byResourceVersion<E extends { metadata?: { resourceVersion?: string | undefined } | undefined }>(events: readonly E[]): E[] {
  return [...events].sort((a, b) => (rv(a) < rv(b) ? -1 : rv(a) > rv(b) ? 1 : 0));
}

function parseJson<T>(text: string | undefined): T | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}

const snapshotIdOf = (r: ResultMessage | undefined): string | undefined => (r && 'snapshotID' in r ? (r as BackupResultMessage).snapshotID : undefined);

export class MicroServiceWatch {
  private readonly lastVersion = new Map<string, bigint>();
  private started = false;
  private stopped = false;
  private completedEvent: ResultMessage | undefined;
  private canceledEvent = false;
  private podEnd: { phase: 'Succeeded' | 'Failed'; message: string } | { phase: 'Gone' } | undefined;
  private waitTimer: { cancel(): void } | undefined;
  private ended = false;

  constructor(private readonly opts: MicroServiceWatchOptions) {}

  get isEnded(): boolean {
    return this.ended;
  }

  get hasStarted(): boolean {
    return this.started;
  }

  /** An Event on the PVB/PVR (create or update). */
  onEvent(event: CoreV1Event): void {
    if (this.ended) return;
    const id = event.metadata?.uid ?? event.metadata?.name ?? '';
    const version = rv(event);
    const before = this.lastVersion.get(id);
    if (before !== undefined && version <= before) return;
    this.lastVersion.set(id, version);
    const message = event.message ?? '';
    switch (event.reason) {
      case EventReasons.Started:
        this.started = true;
        this.opts.onLog?.({ reason: event.reason }, message);
        break;
      case EventReasons.Progress: {
        const p = parseJson<{ totalBytes?: number; doneBytes?: number }>(message);
        if (p) this.opts.onProgress({ totalBytes: p.totalBytes ?? 0, bytesDone: p.doneBytes ?? 0 });
        break;
      }
      case EventReasons.Completed:
        this.completedEvent = parseJson<ResultMessage>(message);
        this.opts.onLog?.({ reason: event.reason }, message);
        break;
      case EventReasons.Canceled:
        this.canceledEvent = true;
        this.opts.onLog?.({ reason: event.reason }, message);
        break;
      case EventReasons.Stopped:
        this.stopped = true;
        this.opts.onLog?.({ reason: event.reason }, message);
        break;
      default:
        this.opts.onLog?.({ reason: event.reason }, message);
    }
    this.evaluate();
  }

  /** The hosting pod as last seen; undefined once it is deleted. */
  onPod(pod: V1Pod | undefined): void {
    if (this.ended || this.podEnd) return;
    if (!pod || pod.metadata?.deletionTimestamp) {
      this.podEnd = { phase: 'Gone' };
    } else if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
      const cs = pod.status.containerStatuses?.find((c) => c.name === this.opts.container);
      const term = cs?.state?.terminated;
      let message = term?.message?.trim() ?? '';
      if (!message && pod.status.phase === 'Failed') {
        message = term ? `data-mover pod ${this.opts.podRef} ended with exit code ${term.exitCode}${term.reason ? ` (${term.reason})` : ''}` : `data-mover pod ${this.opts.podRef} failed${pod.status.reason ? `: ${pod.status.reason}` : ''}`;
      }
      this.podEnd = { phase: pod.status.phase, message };
    } else {
      return;
    }
    this.evaluate();
  }

  /** Stops waiting (the owner is going away); nothing more is reported. */
  close(): void {
    this.ended = true;
    this.waitTimer?.cancel();
  }

  private evaluate(): void {
    if (this.ended || !this.podEnd) return;
    if (this.podEnd.phase === 'Gone') {
      // A deleted pod writes nothing more; only a data path that reported its whole end counts as finished.
      if (this.stopped && this.completedEvent) return this.end({ outcome: 'completed', result: this.completedEvent });
      if (this.stopped && this.canceledEvent) return this.end({ outcome: 'canceled', message: CANCELED_SUFFIX });
      return this.end({ outcome: 'failed', message: `data-mover pod ${this.opts.podRef} was deleted or killed before the data path finished` });
    }
    if (!this.stopped) {
      // A data path that started has more to tell (final progress, result): wait for it. One that never started
      // (canceled or failed while setting up) may have no events at all: a short wait is enough.
      const waitMs = this.started ? this.opts.eventWaitMs : Math.min(this.opts.eventWaitMs, NOT_STARTED_EVENT_WAIT_MS);
      this.waitTimer ??= (this.opts.setTimer ?? defaultTimer)(() => {
        this.opts.onLog?.({ waitedMs: waitMs }, 'data mover ended without its last event; using the termination message');
        this.stopped = true;
        this.evaluate();
      }, waitMs);
      return;
    }
    this.waitTimer?.cancel();
    const { phase, message } = this.podEnd;
    if (phase === 'Failed') {
      if (message.endsWith(CANCELED_SUFFIX)) return this.end({ outcome: 'canceled', message });
      return this.end({ outcome: 'failed', message });
    }
    const result = parseJson<ResultMessage>(message);
    if (!result) return this.end({ outcome: 'failed', message: `data-mover pod ${this.opts.podRef} succeeded without a readable result` });
    if (this.completedEvent && snapshotIdOf(this.completedEvent) !== snapshotIdOf(result)) {
      return this.end({
        outcome: 'failed',
        message: `data-mover results disagree: Completed event has snapshot ${snapshotIdOf(this.completedEvent) ?? '<none>'}, termination message ${snapshotIdOf(result) ?? '<none>'}`,
      });
    }
    this.end({ outcome: 'completed', result });
  }

  private end(o: WatchOutcome): void {
    if (this.ended) return;
    this.ended = true;
    this.waitTimer?.cancel();
    if (o.outcome === 'completed') this.opts.onProgress({ totalBytes: o.result.totalBytes, bytesDone: o.result.totalBytes });
    this.opts.onEnd(o);
  }
}
