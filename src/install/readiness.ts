/**
 * What "installed and ready" means: the server Deployment has its replicas available and, with the node agent,
 * the DaemonSet has a ready pod on every node it is scheduled to.
 */
import { call, type Kube } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { pollUntil } from '../kube/wait.js';
import { NODE_AGENT_NAME, SERVER_NAME } from '../api/install-names.js';

export interface ReadinessState {
  server: { ready: number; desired: number };
  nodeAgent?: { ready: number; desired: number };
}

export function isReady(s: ReadinessState): boolean {
  const serverOk = s.server.desired > 0 && s.server.ready >= s.server.desired;
  const agentOk = !s.nodeAgent || s.nodeAgent.ready >= s.nodeAgent.desired;
  return serverOk && agentOk;
}

export function describeReadiness(s: ReadinessState): string {
  const parts = [`server ${s.server.ready}/${s.server.desired} ready`];
  if (s.nodeAgent) parts.push(`node-agent ${s.nodeAgent.ready}/${s.nodeAgent.desired} ready`);
  return parts.join(', ');
}

export async function readReadiness(kube: Kube, namespace: string, withNodeAgent: boolean): Promise<ReadinessState> {
  const dep = await call(kube, `read Deployment ${namespace}/${SERVER_NAME}`, () =>
    kube.apps.readNamespacedDeployment({ name: SERVER_NAME, namespace }),
  );
  const state: ReadinessState = {
    server: { ready: dep.status?.availableReplicas ?? 0, desired: dep.spec?.replicas ?? 1 },
  };
  if (withNodeAgent) {
    try {
      const ds = await kube.apps.readNamespacedDaemonSet({ name: NODE_AGENT_NAME, namespace });
      state.nodeAgent = { ready: ds.status?.numberReady ?? 0, desired: ds.status?.desiredNumberScheduled ?? 0 };
    } catch (err) {
      if (!isNotFound(err)) throw err;
      state.nodeAgent = { ready: 0, desired: 1 };
    }
  }
  return state;
}

export async function waitReady(
  kube: Kube,
  opts: { namespace: string; withNodeAgent: boolean; timeoutMs: number; onState?: (s: ReadinessState) => void; signal?: AbortSignal },
): Promise<ReadinessState> {
  const result = await pollUntil(
    async () => {
      const s = await readReadiness(kube, opts.namespace, opts.withNodeAgent);
      opts.onState?.(s);
      return { done: isReady(s), value: s, state: describeReadiness(s) };
    },
    { what: 'cairn to become ready', timeoutMs: opts.timeoutMs, intervalMs: 1000, ...(opts.signal ? { signal: opts.signal } : {}) },
  );
  return result as ReadinessState;
}
