/**
 * Small helpers for the local kubelet's cluster tests: a throwaway namespace, pod creation from plain objects,
 * and waits on what a user would look at (pod phase, container state, logs, events).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type CoreV1Event, type V1ContainerStatus, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll } from 'vitest';
import { clusterInfo, kubeConfig } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';

export function core(): CoreV1Api {
  return kubeConfig().makeApiClient(CoreV1Api);
}

const namespaceName = (prefix: string): string => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

export async function createNamespace(prefix: string): Promise<string> {
  const name = namespaceName(prefix);
  await createNamedNamespace(name);
  return name;
}

async function createNamedNamespace(name: string): Promise<void> {
  await core().createNamespace({ body: { metadata: { name } } });
  // Pods need the namespace's default ServiceAccount (created by the controller manager).
  await waitFor(() => core().readNamespacedServiceAccount({ name: 'default', namespace: name }), {
    timeoutMs: 30_000,
    description: `serviceaccount ${name}/default`,
  });
}

export async function deleteNamespace(name: string): Promise<void> {
  await core().deleteNamespace({ name }).catch(() => undefined);
}

/**
 * A namespace of the calling test file's own: its name at once, the namespace created before the file's tests and
 * deleted after them.
 */
export function fileNamespace(prefix: string): string {
  const name = namespaceName(prefix);
  beforeAll(() => createNamedNamespace(name));
  afterAll(() => deleteNamespace(name));
  return name;
}

export function nodes(): { name: string; ip: string; rootDir: string }[] {
  const n = clusterInfo().nodes;
  if (n.length < 2) throw new Error(`these tests need two local nodes, the cluster has ${n.length}`);
  return n;
}

export async function createPod(namespace: string, pod: V1Pod): Promise<V1Pod> {
  return core().createNamespacedPod({ namespace, body: { apiVersion: 'v1', kind: 'Pod', ...pod } });
}

export function getPod(namespace: string, name: string): Promise<V1Pod> {
  return core().readNamespacedPod({ namespace, name });
}

export async function waitForPod(
  namespace: string,
  name: string,
  description: string,
  check: (pod: V1Pod) => boolean,
  timeoutMs = 60_000,
): Promise<V1Pod> {
  return waitFor(
    async () => {
      const pod = await getPod(namespace, name);
      return check(pod) ? pod : undefined;
    },
    { timeoutMs, description: `pod ${namespace}/${name} ${description}` },
  );
}

export function waitForPhase(namespace: string, name: string, phase: string, timeoutMs = 60_000): Promise<V1Pod> {
  return waitForPod(namespace, name, `phase ${phase}`, (p) => p.status?.phase === phase, timeoutMs);
}

export function containerStatus(pod: V1Pod, name: string): V1ContainerStatus | undefined {
  return [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].find((c) => c.name === name);
}

export async function waitForPodGone(namespace: string, name: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      try {
        await getPod(namespace, name);
        return false;
      } catch (err) {
        if ((err as { code?: number }).code === 404) return true;
        throw err;
      }
    },
    { timeoutMs, description: `pod ${namespace}/${name} deleted` },
  );
}

export async function podLogs(namespace: string, name: string, opts: { container?: string; tailLines?: number; previous?: boolean } = {}): Promise<string> {
  return core().readNamespacedPodLog({ namespace, name, ...opts });
}

export async function podEvents(namespace: string, podName: string): Promise<CoreV1Event[]> {
  const list = await core().listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${podName}` });
  return list.items;
}

export function waitForEvent(namespace: string, podName: string, reason: string, timeoutMs = 30_000): Promise<CoreV1Event> {
  return waitFor(async () => (await podEvents(namespace, podName)).find((e) => e.reason === reason), {
    timeoutMs,
    description: `event ${reason} for pod ${namespace}/${podName}`,
  });
}

export function podDirOnNode(rootDir: string, uid: string): string {
  return join(rootDir, 'var/lib/kubelet/pods', uid);
}

export function pidOf(rootDir: string, uid: string, container: string): number | undefined {
  const file = join(rootDir, 'pids', `${uid}_${container}`);
  if (!existsSync(file)) return undefined;
  return Number(readFileSync(file, 'utf8').trim());
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function nodeOf(pod: V1Pod): { name: string; ip: string; rootDir: string } {
  const n = nodes().find((x) => x.name === pod.spec?.nodeName);
  if (!n) throw new Error(`pod ${pod.metadata?.name ?? ''} is on unknown node ${pod.spec?.nodeName ?? '<none>'}`);
  return n;
}
