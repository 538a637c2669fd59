/**
 * The node agent when things go wrong or crowd, on the local cluster: spec.cancel on a running PVB, the data-mover
 * pod deleted mid-run, two PVBs on a node whose ConfigMap allows one data-mover pod at a time, and the node-agent
 * pod itself deleted mid-run (its successor resumes the PVB and completes it).
 *
 * The ConfigMap also caps each backup pod's uploads (`uploadBytesPerSecond`), so a backup of the large volume takes
 * seconds on any machine and "running" is a state the test can act in rather than a race with the data path.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PodVolumeBackup } from '../../src/api/index.js';
import type { Kube } from '../../src/kube/client.js';
import { clusterInfo, kubectl } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import {
  cleanUp,
  installCairn,
  kube as makeKube,
  nodeAgentPod,
  pvbClient,
  pvbFor,
  readyRepository,
  startWorkload,
  volumeDirOnNode,
  waitForPhase,
  writeLargeData,
  writeSampleData,
} from './node-agent-support.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-naf-${RUN}`;
const APP = `naf-app-${RUN}`;
const BACKUP_UID = `00000000-0000-4000-8000-${RUN}${RUN}`;
const LARGE_MIB = 128;
/** 128 MiB of random data then takes 8 s to upload. */
const UPLOAD_BYTES_PER_SECOND = 16 << 20;

let k: Kube;
let node: string;
let workload: V1Pod;

const terminal = ['Completed', 'Failed', 'Canceled'];
const hostingPodOf = (name: string) => k.core.readNamespacedPod({ namespace: NS, name }).catch(() => undefined);

async function createPvb(volume: string, backup = `backup-${RUN}`): Promise<string> {
  const pvb = await pvbClient(k).create(pvbFor({ ns: NS, backup, backupUID: BACKUP_UID, pod: workload, volume }));
  return pvb.metadata?.name ?? '';
}

async function waitInProgress(name: string): Promise<PodVolumeBackup> {
  return waitForPhase(() => pvbClient(k).get(NS, name), ['InProgress', ...terminal], { timeoutMs: 90_000, description: `PVB ${name} InProgress` });
}

async function waitDone(name: string, timeoutMs = 180_000): Promise<PodVolumeBackup> {
  return waitForPhase(() => pvbClient(k).get(NS, name), terminal, { timeoutMs, description: `PVB ${name} finished` });
}

beforeAll(async () => {
  k = makeKube();
  node = clusterInfo().nodes[0]!.name;
  await installCairn({ ns: NS, prefix: `node-agent-faults-it-${RUN}`, nodeAgentConfig: { loadConcurrency: { globalConfig: 1 }, uploadBytesPerSecond: UPLOAD_BYTES_PER_SECOND } });
  await kubectl(['create', 'namespace', APP]);
  workload = await startWorkload(k, { ns: APP, name: 'web', node, withClaim: true });
  writeLargeData(await volumeDirOnNode(k, workload, 'scratch'), LARGE_MIB);
  writeSampleData(await volumeDirOnNode(k, workload, 'data'));
  await readyRepository(k, NS, APP);
}, 420_000);

afterAll(async () => {
  if (k) await cleanUp(k, NS, [APP]);
});

describe('node-agent faults and limits', () => {
  it('spec.cancel on a running PVB ends it Canceled and removes its data-mover pod', async () => {
    const name = await createPvb('scratch');
    await waitInProgress(name);
    // Progress is in the status while the data path runs.
    const running = await waitFor(
      async () => {
        const p = await pvbClient(k).get(NS, name);
        return p?.status?.phase !== 'InProgress' || (p.status.progress?.bytesDone ?? 0) > 0 ? p : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, description: `progress of PVB ${name}` },
    );
    expect(running?.status?.phase).toBe('InProgress');
    expect(running?.status?.progress?.totalBytes).toBeGreaterThan(0);
    expect(running?.status?.progress?.bytesDone).toBeLessThan(running?.status?.progress?.totalBytes ?? 0);
    await pvbClient(k).patch(NS, name, { spec: { cancel: true } });
    const done = await waitDone(name);
    expect(done.status?.phase, done.status?.message).toBe('Canceled');
    expect(done.status?.completionTimestamp).toBeTruthy();
    await waitFor(async () => (await hostingPodOf(name)) === undefined, { timeoutMs: 30_000, description: `data-mover pod ${name} gone` });
  }, 240_000);

  it('a PVB whose pod or volume does not exist fails with the expose error, and no data-mover pod is left', async () => {
    const noVolume = await createPvb('not-a-volume', `expose-${RUN}`);
    const gonePod = pvbFor({ ns: NS, backup: `expose-${RUN}`, backupUID: BACKUP_UID, pod: workload, volume: 'scratch' });
    gonePod.spec.pod = { ...gonePod.spec.pod, name: 'no-such-pod', uid: 'no-such-uid' };
    const noPod = (await pvbClient(k).create(gonePod)).metadata?.name ?? '';
    const [a, b] = await Promise.all([waitDone(noVolume, 60_000), waitDone(noPod, 60_000)]);
    expect(a.status?.phase).toBe('Failed');
    expect(a.status?.message).toBe(`error to expose PVB: volume not-a-volume is not in pod ${APP}/web`);
    expect(b.status?.phase).toBe('Failed');
    expect(b.status?.message).toBe(`error to expose PVB: pod ${APP}/no-such-pod not found`);
    expect(await hostingPodOf(noVolume)).toBeUndefined();
    expect(await hostingPodOf(noPod)).toBeUndefined();
  }, 120_000);

  it('a data-mover pod deleted mid-run fails its PVB with a reason naming the pod', async () => {
    const name = await createPvb('scratch');
    await waitInProgress(name);
    await waitFor(async () => (await hostingPodOf(name))?.status?.phase === 'Running', { timeoutMs: 30_000, description: `data-mover pod ${name} Running` });
    await k.core.deleteNamespacedPod({ namespace: NS, name, gracePeriodSeconds: 0 });
    const done = await waitDone(name);
    expect(done.status?.phase, done.status?.message).toBe('Failed');
    expect(done.status?.message).toContain('data path backup failed');
    expect(done.status?.message).toContain(`${NS}/${name}`);
  }, 240_000);

  it('with loadConcurrency 1 two PVBs on one node never have two data-mover pods at once, and both complete', async () => {
    const names = await Promise.all([createPvb('data', `conc-${RUN}`), createPvb('scratch', `conc-${RUN}`)]);
    let most = 0;
    const done = await waitFor(
      async () => {
        const pods = await k.core.listNamespacedPod({ namespace: NS });
        const hosting = pods.items.filter((p) => names.includes(p.metadata?.name ?? '') && p.spec?.nodeName === node);
        most = Math.max(most, hosting.length);
        const pvbs = await Promise.all(names.map((n) => pvbClient(k).get(NS, n)));
        return pvbs.every((p) => terminal.includes(p?.status?.phase ?? '')) ? pvbs : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 100, description: 'both PVBs finished' },
    );
    for (const p of done) expect(p?.status?.phase, p?.status?.message).toBe('Completed');
    expect(most).toBe(1);
  }, 300_000);

  it('a node-agent deleted mid-run is replaced, and the new one resumes the PVB to Completed', async () => {
    // New data, so the backup has real work to do while its node agent is away.
    writeLargeData(join(await volumeDirOnNode(k, workload, 'scratch'), 'added'), LARGE_MIB);
    const name = await createPvb('scratch', `resume-${RUN}`);
    await waitInProgress(name);
    const before = await nodeAgentPod(k, NS, node);
    await k.core.deleteNamespacedPod({ namespace: NS, name: before.metadata?.name ?? '', gracePeriodSeconds: 0 });
    const after = await waitFor(
      async () => {
        const p = await nodeAgentPod(k, NS, node).catch(() => undefined);
        return p && p.metadata?.uid !== before.metadata?.uid && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
      },
      { timeoutMs: 120_000, description: 'a new ready node-agent' },
    );
    const done = await waitDone(name);
    expect(done.status?.phase, done.status?.message).toBe('Completed');
    expect(done.status?.snapshotID).toMatch(/^[0-9a-f]{16,}$/);
    expect(done.status?.progress?.bytesDone).toBeGreaterThanOrEqual(LARGE_MIB << 20);
    // The new node-agent finished it: the result and the data mover's log are in its log.
    const logs = await kubectl(['-n', NS, 'logs', after.metadata?.name ?? '']);
    expect(logs.stdout + logs.stderr).toContain(`begin pod logs[${name}/`);
    await waitFor(async () => (await hostingPodOf(name)) === undefined, { timeoutMs: 30_000, description: `data-mover pod ${name} gone` });
  }, 300_000);
});
