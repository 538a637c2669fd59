/**
 * Deleting a pod: SIGTERM to its processes, SIGKILL after the grace period, the pod directory removed (never the
 * PV data), the API object gone; a Killing event.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterInfo } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';
import {
  core,
  createPod,
  fileNamespace,
  nodeOf,
  pidOf,
  podDirOnNode,
  podLogs,
  processAlive,
  waitForEvent,
  waitForPhase,
  waitForPodGone,
} from './helpers.js';

const ns = fileNamespace('lk-deletion');

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

  it('runs postStart after the container starts and preStop before SIGTERM', async () => {
    const shared = join(clusterInfo().runDir, `hooks-${ns}`);
    await createPod(ns, {
      metadata: { name: 'hooked' },
      spec: {
        terminationGracePeriodSeconds: 10,
        volumes: [{ name: 'out', hostPath: { path: shared, type: 'DirectoryOrCreate' } }],
        containers: [{
          name: 'c',
          image: 'busybox',
          command: ['sh', '-c', 'trap "echo term >> /out/events; exit 0" TERM; while true; do sleep 0.2; done'],
          volumeMounts: [{ name: 'out', mountPath: '/out' }],
          lifecycle: {
            postStart: { exec: { command: ['sh', '-c', 'echo post-start >> /out/events'] } },
            preStop: { exec: { command: ['sh', '-c', 'echo pre-stop >> /out/events'] } },
          },
        }],
      },
    });
    await waitForPhase(ns, 'hooked', 'Running');
    await waitFor(() => existsSync(join(shared, 'events')), { timeoutMs: 10_000, description: 'postStart output' });
    expect(readFileSync(join(shared, 'events'), 'utf8')).toBe('post-start\n');
    await core().deleteNamespacedPod({ namespace: ns, name: 'hooked' });
    await waitForPodGone(ns, 'hooked', 30_000);
    expect(readFileSync(join(shared, 'events'), 'utf8')).toBe('post-start\npre-stop\nterm\n');
  });
});
