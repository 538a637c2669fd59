/**
 * Stopping containers as the kubelet does: `Killing` events, preStop hooks (within the grace period), SIGTERM to
 * each process group, SIGKILL at the deadline, and waiting until every exit has been recorded.
 */
import { runHook } from './container-hooks.js';
import type { EventType } from './events.js';
import type { ProbeTarget } from './probes.js';
import { killGroup, type RunningProcess } from './process-runtime.js';
import type { Slot } from './slot.js';

export interface StopContainersOptions {
  slots: Slot[];
  /** Epoch ms by which everything must be gone (the grace period's end). */
  deadline: number;
  hookTarget: (s: Slot, proc: RunningProcess) => ProbeTarget;
  event: (s: Slot, e: { type: EventType; reason: string; message: string }) => void;
}

export async function stopContainers(o: StopContainersOptions): Promise<void> {
  const running = o.slots.filter((s) => s.proc);
  if (running.length === 0) return;
  for (const s of running) {
    s.stopping = true;
    o.event(s, { type: 'Normal', reason: 'Killing', message: `Stopping container ${s.spec.name}` });
  }
  await Promise.all(
    running.map(async (s) => {
      const preStop = s.spec.lifecycle?.preStop;
      if (!preStop || !s.proc) return;
      const result = await runHook(preStop, o.hookTarget(s, s.proc), Math.max(o.deadline - Date.now(), 0));
      if (!result.ok) o.event(s, { type: 'Warning', reason: 'FailedPreStopHook', message: result.message });
    }),
  );
  for (const s of running) if (s.proc) killGroup(s.proc.pid, 'SIGTERM');
  const all = Promise.all(running.map((s) => s.settled));
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    all.then(() => false),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(true), Math.max(o.deadline - Date.now(), 0)))),
  ]);
  if (timer) clearTimeout(timer);
  if (timedOut) for (const s of running) if (s.proc) killGroup(s.proc.pid, 'SIGKILL');
  await all;
}
