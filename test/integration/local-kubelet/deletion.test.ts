/**
 * Deleting a pod: SIGTERM to its processes, SIGKILL after the grace period, the pod directory removed (never the
 * PV data), the API object gone; a Killing event.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/wait.js';
import {
  core,
  createNamespace,
  createPod,
  deleteNamespace,
  nodeOf,
  pidOf,
  podDirOnNode,
  podLogs,
  processAlive,
  waitForEvent,
  waitForPhase,
  waitForPodGone,
} from './helpers.js';

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('lk-deletion');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

describe('local kubelet: deletion', () => {
  it('stops the processes, removes the pod directory and the pod', async () => {
    await createPod(ns, {
      metadata: { name: 'sleeper' },
      spec: {
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'sleep 3600 & sleep 3600'], volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
      },
    });
    const pod = await waitForPhase(ns, 'sleeper', 'Running');
    const node = nodeOf(pod);
    const uid = pod.metadata?.uid ?? '';
    const pid = await waitFor(() => pidOf(node.rootDir, uid, 'c'), { timeoutMs: 10_000, description: 'pid file' });
    expect(processAlive(pid)).toBe(true);
    expect(existsSync(podDirOnNode(node.rootDir, uid))).toBe(true);

    await core().deleteNamespacedPod({ namespace: ns, name: 'sleeper', gracePeriodSeconds: 5 });
    await waitForPodGone(ns, 'sleeper');
    expect(processAlive(pid)).toBe(false);
    // The whole process group is gone, not just its leader.
    expect(() => process.kill(-pid, 0)).toThrow();
    expect(existsSync(podDirOnNode(node.rootDir, uid))).toBe(false);
    expect(pidOf(node.rootDir, uid, 'c')).toBeUndefined();
    await waitForEvent(ns, 'sleeper', 'Killing');
  });

  it('kills a process that ignores SIGTERM once the grace period is over', async () => {
    await createPod(ns, {
      metadata: { name: 'stubborn' },
      spec: {
        terminationGracePeriodSeconds: 2,
        containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'trap "" TERM; echo ignoring TERM; while true; do sleep 1; done'] }],
      },
    });
    const pod = await waitForPhase(ns, 'stubborn', 'Running');
    const node = nodeOf(pod);
    const pid = await waitFor(() => pidOf(node.rootDir, pod.metadata?.uid ?? '', 'c'), { timeoutMs: 10_000, description: 'pid file' });
    // Only once the trap is set does the process really ignore SIGTERM.
    await waitFor(async () => (await podLogs(ns, 'stubborn')).includes('ignoring TERM'), { timeoutMs: 10_000, description: 'trap set' });
    const started = Date.now();
    await core().deleteNamespacedPod({ namespace: ns, name: 'stubborn' });
    await waitForPodGone(ns, 'stubborn', 30_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(processAlive(pid)).toBe(false);
  });
});
