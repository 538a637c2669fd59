/**
 * One container of a pod as the pod worker tracks it: its spec, what has been reported about it, the running
 * process (if any) and its restart back-off; plus the questions asked about it from outside (which log to serve).
 */
import type { V1Container } from '@kubernetes/client-node';
import type { ContainerRecord } from './pod-status.js';
import type { Prober } from './probes.js';
import type { RunningProcess } from './process-runtime.js';

export interface Slot {
  spec: V1Container;
  init: boolean;
  sidecar: boolean;
  record: ContainerRecord;
  proc?: RunningProcess | undefined;
  /** Resolves once the current run's exit has been recorded. */
  settled?: Promise<void> | undefined;
  /** Set while we stop it on purpose. */
  stopping: boolean;
  nextBackoffMs: number;
  probers: Prober[];
  /** The running container's environment, for exec. */
  env?: ReadonlyMap<string, string> | undefined;
  backoffUntil: number;
  pullFailed: boolean;
}

export interface LogRun {
  logFile: string;
  stillRunning: () => boolean;
}

/** The latest run is numbered restartCount (a back-off wait has not started the next one yet). */
export function logRunOf(s: Slot, o: { previous: boolean; logFile: (run: number) => string }): LogRun | { error: string } {
  const name = s.spec.name;
  const run = o.previous ? s.record.restartCount - 1 : s.record.restartCount;
  if (run < 0 || (!o.previous && s.record.current.state === 'waiting' && !s.record.last)) {
    return { error: o.previous ? `previous terminated container "${name}" not found` : `container "${name}" is waiting to start` };
  }
  const proc = s.proc;
  return { logFile: o.logFile(run), stillRunning: () => !o.previous && proc !== undefined && s.proc === proc };
}
