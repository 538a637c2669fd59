/**
 * What "installed and ready" means: the server Deployment has its replicas available and, with the node agent,
 * the DaemonSet has a ready pod on every node it is scheduled to.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { OperationFailedError } from '../base/errors.js';
import { call, type Kube } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { pollUntil } from '../kube/wait.js';
import { NODE_AGENT_NAME, PART_OF, PART_OF_LABEL, SERVER_NAME } from '../api/install-names.js';

export interface ReadinessState {
  server: { ready: number; desired: number };
  nodeAgent?: { ready: number; desired: number };
  /** A pod that cannot become ready without someone changing something (an image that cannot be pulled...). */
  stuck?: string;
}

/**
 * Waiting reasons that no amount of waiting mends: the image cannot be pulled (after the kubelet's first retry,
 * so one network hiccup is not fatal), the reference is malformed, the pod spec names something missing, or the
 * container keeps crashing.
 */
const STUCK_REASONS = new Set(['ImagePullBackOff', 'ErrImageNeverPull', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError', 'CrashLoopBackOff']);

const CRASHES_BEFORE_STUCK = 3;

/** The first of `pods` that is stuck, as one line naming the pod, container, reason and the kubelet's message. */
export function stuckReason(pods: readonly V1Pod[]): string | undefined {
  for (const pod of pods) {
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    for (const c of statuses) {
      const waiting = c.state?.waiting;
      if (!waiting?.reason || !STUCK_REASONS.has(waiting.reason)) continue;
      // One crash can be a moment's trouble (the API server restarting); a few in a row are a crash loop.
      if (waiting.reason === 'CrashLoopBackOff' && c.restartCount < CRASHES_BEFORE_STUCK) continue;
      const image = waiting.reason.includes('Image') ? ` (image "${c.image}")` : '';
      const detail = waiting.message ?? c.lastState?.terminated?.message ?? c.lastState?.terminated?.reason;
      return `pod ${pod.metadata?.name ?? '?'} container ${c.name}: ${waiting.reason}${image}${detail ? `: ${detail.trim()}` : ''}`;
    }
  }
  return undefined;
}

/** `install --wait` gave up early: a pod cannot become ready as it is. */
export class InstallStuckError extends OperationFailedError {}

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
  const pods = await call(kube, `list pods in ${namespace}`, () =>
    kube.core.listNamespacedPod({ namespace, labelSelector: `${PART_OF_LABEL}=${PART_OF}` }),
  );
  // Only the server's and the node agent's own pods: data-mover pods of running backups are none of install's business.
  const own = pods.items.filter((p) => p.metadata?.labels?.deploy === SERVER_NAME || p.metadata?.labels?.name === NODE_AGENT_NAME);
  const stuck = stuckReason(own);
  if (stuck) state.stuck = stuck;
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
      if (s.stuck && !isReady(s)) throw new InstallStuckError(`cairn cannot become ready: ${s.stuck}`);
      return { done: isReady(s), value: s, state: describeReadiness(s) };
    },
    { what: 'cairn to become ready', timeoutMs: opts.timeoutMs, intervalMs: 1000, ...(opts.signal ? { signal: opts.signal } : {}) },
  );
  return result as ReadinessState;
}
