/**
 * A container run's probes wired to what the kubelet does with them: a startup probe holds back the others and
 * `started` until it passes; readiness flips the container's `ready` (with an Unhealthy event when it fails); a
 * liveness or startup failure is reported and the container is stopped (SIGTERM, SIGKILL after the grace period)
 * so that its restart policy applies.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { EventRecorder } from './events.js';
import { Prober, type ProbeTarget } from './probes.js';
import { killGroup, type RunningProcess } from './process-runtime.js';

export interface ContainerProbersOptions {
  pod: V1Pod;
  container: V1Container;
  proc: RunningProcess;
  env: ReadonlyMap<string, string>;
  nodeIp: string;
  events: EventRecorder;
  fieldPath: string;
  /** False once this run has ended: late results are dropped. */
  isCurrent: () => boolean;
  onReadiness: (ready: boolean) => void;
  /** `started`: false while a startup probe has not passed yet. */
  onStarted: (started: boolean) => void;
}

export function startContainerProbers(o: ContainerProbersOptions): Prober[] {
  const { container: c, pod, proc, events, fieldPath } = o;
  const target: ProbeTarget = {
    podIp: o.nodeIp,
    container: c,
    pid: proc.pid,
    env: o.env,
    runAsUser: c.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser,
    runAsGroup: c.securityContext?.runAsGroup ?? pod.spec?.securityContext?.runAsGroup,
  };
  const probers: Prober[] = [];
  const stopContainer = (why: string) => {
    events.record({ pod, fieldPath, type: 'Normal', reason: 'Killing', message: `Container ${c.name} ${why}, will be restarted` });
    killGroup(proc.pid, 'SIGTERM');
    const graceMs = (pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    setTimeout(() => {
      if (o.isCurrent()) killGroup(proc.pid, 'SIGKILL');
    }, graceMs).unref();
  };
  if (c.readinessProbe) {
    probers.push(
      new Prober({
        kind: 'readiness',
        probe: c.readinessProbe,
        target,
        onChange: (healthy, message) => {
          if (!o.isCurrent()) return;
          if (!healthy) events.record({ pod, fieldPath, type: 'Warning', reason: 'Unhealthy', message: `Readiness probe failed: ${message ?? ''}` });
          o.onReadiness(healthy);
        },
      }),
    );
  }
  if (c.livenessProbe) {
    probers.push(
      new Prober({
        kind: 'liveness',
        probe: c.livenessProbe,
        target,
        onChange: (healthy, message) => {
          if (healthy || !o.isCurrent()) return;
          events.record({ pod, fieldPath, type: 'Warning', reason: 'Unhealthy', message: `Liveness probe failed: ${message ?? ''}` });
          stopContainer('failed liveness probe');
        },
      }),
    );
  }
  // Probes begin once the container is set up (its mounts are in place).
  const whenReady = (start: () => void) => void proc.ready.then((ok) => ok && o.isCurrent() && start());
  if (!c.startupProbe) {
    o.onStarted(true);
    whenReady(() => probers.forEach((p) => p.start()));
    return probers;
  }
  // Readiness and liveness wait for the startup probe's first success; its failure restarts the container.
  const startup = new Prober({
    kind: 'startup',
    probe: c.startupProbe,
    target,
    onChange: (healthy, message) => {
      if (!o.isCurrent()) return;
      if (healthy) {
        o.onStarted(true);
        for (const p of probers) p.start();
        return;
      }
      events.record({ pod, fieldPath, type: 'Warning', reason: 'Unhealthy', message: `Startup probe failed: ${message ?? ''}` });
      stopContainer('failed startup probe');
    },
  });
  o.onStarted(false);
  whenReady(() => startup.start());
  return [startup, ...probers];
}
