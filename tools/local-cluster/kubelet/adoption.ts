/**
 * What a restarted kubelet knows about a container from an earlier run: the state it last reported (pod status)
 * and the run record it left on disk. A still-running process is adopted; one that ended meanwhile becomes a
 * terminated state with the exit status its launch script recorded (137 when it was killed outright).
 */
import type { V1ContainerStatus } from '@kubernetes/client-node';
import type { RunState, TerminatedState } from './pod-status.js';
import { adoptProcess, readExitCode, readRunRecord, type RunningProcess } from './process-runtime.js';

export interface RestoredContainer {
  restartCount: number;
  current?: RunState | undefined;
  last?: TerminatedState | undefined;
  /** The adopted process, when the reported run is still alive. */
  proc?: RunningProcess | undefined;
}

type ApiTerminated = NonNullable<NonNullable<V1ContainerStatus['state']>['terminated']>;

function toTerminated(t: ApiTerminated): TerminatedState {
  return {
    state: 'terminated',
    exitCode: t.exitCode,
    reason: t.reason ?? (t.exitCode === 0 ? 'Completed' : 'Error'),
    message: t.message,
    startedAt: t.startedAt ? new Date(t.startedAt) : new Date(),
    finishedAt: t.finishedAt ? new Date(t.finishedAt) : new Date(),
  };
}

export async function restoreContainer(status: V1ContainerStatus, runtimeDir: string): Promise<RestoredContainer> {
  const restored: RestoredContainer = { restartCount: status.restartCount };
  if (status.lastState?.terminated) restored.last = toTerminated(status.lastState.terminated);
  if (status.state?.terminated) restored.current = toTerminated(status.state.terminated);
  const running = status.state?.running;
  if (!running) return restored;
  const record = await readRunRecord(runtimeDir, status.restartCount);
  const proc = record ? await adoptProcess({ record, runtimeDir }) : undefined;
  if (proc) return { ...restored, proc };
  const code = (await readExitCode(runtimeDir, status.restartCount)) ?? 137;
  restored.current = {
    state: 'terminated',
    exitCode: code,
    reason: code === 0 ? 'Completed' : 'Error',
    message: 'the container process ended while the kubelet was down',
    startedAt: running.startedAt ? new Date(running.startedAt) : new Date(),
    finishedAt: new Date(),
  };
  return restored;
}
