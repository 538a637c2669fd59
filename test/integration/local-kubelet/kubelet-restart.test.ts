/**
 * A kubelet that comes back after a crash adopts the pods of its node: running processes are kept, ones that
 * died meanwhile are restarted per policy, pods deleted meanwhile are cleaned up and deletions finish. The crash
 * is simulated with SIGUSR1 (forget everything, leave processes running), the return with a second SIGUSR1.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../support/wait.js';
import {
  containerStatus,
  core,
  createPod,
  fileNamespace,
  getPod,
  nodes,
  pidOf,
  podDirOnNode,
  processAlive,
  waitForPhase,
  waitForPod,
  waitForPodGone,
} from './helpers.js';

/** The kubelet process of a node and its log file, found from its command line. */
function kubeletOf(rootDir: string): { pid: number; logFile: string } {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!argv.some((a) => a.endsWith('kubelet/main.ts'))) continue;
    if (argv[argv.indexOf('--root-dir') + 1] !== rootDir) continue;
    return { pid: Number(entry), logFile: argv[argv.indexOf('--log-file') + 1] ?? '' };
  }
  throw new Error(`no kubelet process for node root ${rootDir}`);
}

async function waitForLog(logFile: string, text: string, after: number): Promise<void> {
  await waitFor(() => readFileSync(logFile, 'utf8').slice(after).includes(text), { timeoutMs: 30_000, description: `"${text}" in ${logFile}` });
}

const ns = fileNamespace('lk-restart');

describe('local kubelet: restart', () => {
  it('adopts running pods, restarts dead ones and cleans up pods deleted while it was down', async () => {
    const [node] = nodes();
    if (!node) throw new Error('need a node');
    const sleeper = (name: string) =>
      createPod(ns, {
        metadata: { name },
        spec: { nodeName: node.name, terminationGracePeriodSeconds: 2, containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] },
      });
    for (const name of ['keep', 'dies', 'force-deleted', 'deleted']) await sleeper(name);
    const pods = new Map<string, { uid: string; pid: number }>();
    for (const name of ['keep', 'dies', 'force-deleted', 'deleted']) {
      const pod = await waitForPhase(ns, name, 'Running');
      const uid = pod.metadata?.uid ?? '';
      pods.set(name, { uid, pid: await waitFor(() => pidOf(node.rootDir, uid, 'c'), { timeoutMs: 10_000, description: `pid of ${name}` }) });
    }
    const get = (name: string) => {
      const p = pods.get(name);
      if (!p) throw new Error(name);
      return p;
    };

    const kubelet = kubeletOf(node.rootDir);
    const logStart = readFileSync(kubelet.logFile, 'utf8').length;
    process.kill(kubelet.pid, 'SIGUSR1');
    await waitForLog(kubelet.logFile, 'simulated crash: kubelet is down', logStart);

    // While the kubelet is down: a container dies, one pod is force-deleted, one is deleted normally.
    process.kill(-get('dies').pid, 'SIGKILL');
    await core().deleteNamespacedPod({ namespace: ns, name: 'force-deleted', gracePeriodSeconds: 0 });
    await waitForPodGone(ns, 'force-deleted');
    await core().deleteNamespacedPod({ namespace: ns, name: 'deleted' });
    expect((await getPod(ns, 'deleted')).metadata?.deletionTimestamp).toBeDefined();
    expect(processAlive(get('force-deleted').pid)).toBe(true);

    process.kill(kubelet.pid, 'SIGUSR1');
    await waitForLog(kubelet.logFile, 'simulated crash: kubelet is up again', logStart);

    await waitForPodGone(ns, 'deleted', 30_000);
    expect(processAlive(get('deleted').pid)).toBe(false);
    await waitFor(() => !processAlive(get('force-deleted').pid) && !existsSync(podDirOnNode(node.rootDir, get('force-deleted').uid)), {
      timeoutMs: 10_000,
      description: 'force-deleted pod killed and its directory removed',
    });

    const dies = await waitForPod(ns, 'dies', 'restarted', (p) => containerStatus(p, 'c')?.restartCount === 1 && p.status?.phase === 'Running');
    expect(containerStatus(dies, 'c')?.lastState?.terminated?.exitCode).toBe(137);

    const keep = await getPod(ns, 'keep');
    expect(containerStatus(keep, 'c')).toMatchObject({ restartCount: 0, state: { running: {} } });
    expect(pidOf(node.rootDir, get('keep').uid, 'c')).toBe(get('keep').pid);
    expect(processAlive(get('keep').pid)).toBe(true);

    // The adopted process is still managed: deleting its pod stops it.
    await core().deleteNamespacedPod({ namespace: ns, name: 'keep' });
    await waitForPodGone(ns, 'keep', 30_000);
    expect(processAlive(get('keep').pid)).toBe(false);
  });
});
