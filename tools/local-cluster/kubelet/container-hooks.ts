/**
 * Container lifecycle hooks: postStart right after the container starts, preStop before it is sent SIGTERM.
 * Handlers are the probe handlers (exec in the container, httpGet, tcpSocket) plus `sleep`; a hook gets at most
 * the given time. What the kubelet does with a failure (kill after postStart, carry on after preStop) is the
 * caller's.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { V1LifecycleHandler } from '@kubernetes/client-node';
import { runProbe, type ProbeResult, type ProbeTarget } from './probes.js';

export async function runHook(handler: V1LifecycleHandler, target: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
  if (handler.sleep) {
    await delay(Math.min(handler.sleep.seconds * 1000, timeoutMs));
    return { ok: true };
  }
  const timeoutSeconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  return runProbe({ exec: handler.exec, httpGet: handler.httpGet, tcpSocket: handler.tcpSocket, timeoutSeconds }, target);
}
