/**
 * The node agent on the local cluster with MinIO, driven the way the server drives it: PVBs and PVRs created by
 * hand per the contract. A PVB of a PVC volume and of an emptyDir goes New → Accepted → Prepared → InProgress →
 * Completed through a data-mover pod that is gone afterwards, and the data mover's log lands in the node-agent's
 * log; PVRs into a new pod waiting in restore-wait bring the same bytes back and let the pod start.
 */
import { randomBytes } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PodVolumeBackup } from '../../src/api/index.js';
import type { Kube } from '../../src/kube/client.js';
import { clusterInfo, kubectl } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import {
  cleanUp,
  expectSameTree,
  installCairn,
  kube as makeKube,
  nodeAgentPod,
  pvbClient,
  pvbFor,
  pvrClient,
  pvrFor,
  readyRepository,
  startWorkload,
  volumeDirOnNode,
  waitForPhase,
  writeSampleData,
} from './node-agent-support.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-na-${RUN}`;
const APP = `na-app-${RUN}`;
const RESTORED = `na-restored-${RUN}`;
const BACKUP = `backup-${RUN}`;
const BACKUP_UID = `00000000-0000-4000-8000-${RUN}${RUN}`;

let k: Kube;
let node: string;
let source: V1Pod;
const snapshots = new Map<string, string>();

beforeAll(async () => {
  k = makeKube();
  node = clusterInfo().nodes[0]!.name;
  await installCairn({ ns: NS, prefix: `node-agent-it-${RUN}` });
  await kubectl(['create', 'namespace', APP]);
  await kubectl(['create', 'namespace', RESTORED]);
  source = await startWorkload(k, { ns: APP, name: 'web', node, withClaim: true });
  writeSampleData(await volumeDirOnNode(k, source, 'data'));
  writeSampleData(await volumeDirOnNode(k, source, 'scratch'), { bigMiB: 1 });
  await readyRepository(k, NS, APP);
}, 420_000);

afterAll(async () => {
  if (k) await cleanUp(k, NS, [APP, RESTORED]);
});

describe('node-agent PodVolumeBackup and PodVolumeRestore', () => {
  it('backs up a PVC volume and an emptyDir: every phase in order, snapshot ID, progress, no pod left, data-mover log merged', async () => {
    const pvc = await k.core.readNamespacedPersistentVolumeClaim({ namespace: APP, name: 'web-data' });
    const created = await Promise.all([
      pvbClient(k).create(pvbFor({ ns: NS, backup: BACKUP, backupUID: BACKUP_UID, pod: source, volume: 'data', pvc: { name: 'web-data', uid: pvc.metadata?.uid ?? '' } })),
      pvbClient(k).create(pvbFor({ ns: NS, backup: BACKUP, backupUID: BACKUP_UID, pod: source, volume: 'scratch' })),
    ]);
    // Sample the phases each PVB goes through, and its hosting pod while it exists.
    const seen = new Map<string, string[]>();
    const hostingPods = new Map<string, V1Pod>();
    const done = await waitFor(
      async () => {
        const all: PodVolumeBackup[] = [];
        for (const c of created) {
          const name = c.metadata?.name ?? '';
          const pvb = await pvbClient(k).get(NS, name);
          if (!pvb) return undefined;
          const phases = seen.get(name) ?? [];
          const phase = pvb.status?.phase ?? 'New';
          if (phases.at(-1) !== phase) phases.push(phase);
          seen.set(name, phases);
          const pod = await k.core.readNamespacedPod({ namespace: NS, name }).catch(() => undefined);
          if (pod && !hostingPods.has(name)) hostingPods.set(name, pod);
          all.push(pvb);
        }
        // Finished: a terminal phase, then the node agent's clean-up, after which it drops its finalizer.
        const finished = (p: PodVolumeBackup) => ['Completed', 'Failed', 'Canceled'].includes(p.status?.phase ?? '') && !(p.metadata?.finalizers ?? []).includes('velero.io/pod-volume-finalizer');
        return all.every(finished) ? all : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 200, description: 'both PVBs finished and their finalizers gone' },
    );
    for (const pvb of done) {
      const name = pvb.metadata?.name ?? '';
      expect(pvb.status?.phase, pvb.status?.message).toBe('Completed');
      expect(pvb.status?.snapshotID).toMatch(/^[0-9a-f]{16,}$/);
      expect(pvb.status?.path).toBe(`/${pvb.metadata?.uid}`);
      expect(pvb.status?.progress?.totalBytes).toBeGreaterThan(0);
      expect(pvb.status?.progress?.bytesDone).toBe(pvb.status?.progress?.totalBytes);
      expect(pvb.status?.acceptedTimestamp).toBeTruthy();
      expect(pvb.status?.startTimestamp).toBeTruthy();
      expect(pvb.status?.completionTimestamp).toBeTruthy();
      expect(pvb.metadata?.labels?.['velero.io/expose-on-going']).toBeUndefined();
      expect(pvb.metadata?.finalizers ?? []).not.toContain('velero.io/pod-volume-finalizer');
      // Phases only move forward (sampling may miss short ones).
      const order = ['New', 'Accepted', 'Prepared', 'InProgress', 'Completed'];
      const phases = seen.get(name) ?? [];
      expect(phases.map((p) => order.indexOf(p))).toEqual([...phases.map((p) => order.indexOf(p))].sort((a, b) => a - b));
      expect(phases.at(-1)).toBe('Completed');
      snapshots.set(pvb.spec.volume, pvb.status?.snapshotID ?? '');

      // The hosting pod was made per the contract, and is gone now.
      const pod = hostingPods.get(name);
      if (pod) {
        expect(pod.metadata?.labels?.['velero.io/pod-volume-backup']).toBe(name);
        expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'PodVolumeBackup', name, uid: pvb.metadata?.uid, controller: true });
        expect(pod.spec?.nodeName).toBe(node);
        expect(pod.spec?.restartPolicy).toBe('Never');
        expect(pod.spec?.containers[0]?.name).toBe(pvb.metadata?.uid);
        expect(pod.spec?.containers[0]?.args).toEqual(expect.arrayContaining(['pod-volume', 'backup', `--volume-path=/${pvb.metadata?.uid}`, `--pod-volume-backup=${name}`]));
      }
      await waitFor(async () => (await k.core.readNamespacedPod({ namespace: NS, name }).catch(() => undefined)) === undefined, {
        timeoutMs: 30_000,
        description: `hosting pod ${name} gone`,
      });
    }
    expect(hostingPods.size).toBeGreaterThan(0);

    const agent = await nodeAgentPod(k, NS, node);
    const logs = await kubectl(['-n', NS, 'logs', agent.metadata?.name ?? '']);
    for (const pvb of done) {
      const source = `${pvb.metadata?.name}/${pvb.metadata?.uid}`;
      expect(logs.stdout + logs.stderr).toContain(`begin pod logs[${source}]`);
      expect(logs.stdout + logs.stderr).toContain(`end pod logs[${source}]`);
    }
    expect(logs.stdout + logs.stderr).toContain('snapshot written');
  }, 240_000);

  it('restores both volumes into a new pod waiting in restore-wait: PVRs complete, the pod starts, the files match', async () => {
    expect(snapshots.size).toBe(2);
    const restoreUID = `00000000-0000-4000-9000-${RUN}${RUN}`;
    const target = await startWorkload(k, { ns: RESTORED, name: 'web', node, withClaim: true, restoreUID });
    const created = await Promise.all(
      ['data', 'scratch'].map((volume) =>
        pvrClient(k).create(pvrFor({ ns: NS, restore: `restore-${RUN}`, restoreUID, pod: target, volume, snapshotID: snapshots.get(volume) ?? '', sourceNamespace: APP })),
      ),
    );
    for (const c of created) {
      const pvr = await waitForPhase(() => pvrClient(k).get(NS, c.metadata?.name ?? ''), ['Completed', 'Failed', 'Canceled'], {
        timeoutMs: 180_000,
        description: `PVR ${c.metadata?.name} finished`,
      });
      expect(pvr.status?.phase, pvr.status?.message).toBe('Completed');
      expect(pvr.status?.node).toBe(node);
      expect(pvr.status?.progress?.bytesDone).toBeGreaterThan(0);
    }
    const running = await waitFor(
      async () => {
        const pod = await k.core.readNamespacedPod({ namespace: RESTORED, name: 'web' });
        return pod.status?.phase === 'Running' ? pod : undefined;
      },
      { timeoutMs: 60_000, description: 'restored pod Running' },
    );
    for (const volume of ['data', 'scratch']) {
      expectSameTree(await volumeDirOnNode(k, source, volume), await volumeDirOnNode(k, running, volume), ['.velero']);
    }
  }, 300_000);

  it('a PVR of a snapshot that does not exist fails with "data path restore failed" and its data-mover pod is removed', async () => {
    const restoreUID = `00000000-0000-4000-a000-${RUN}${RUN}`;
    const target = await startWorkload(k, { ns: RESTORED, name: 'broken', node, restoreUID });
    const pvr = await pvrClient(k).create(
      pvrFor({ ns: NS, restore: `broken-${RUN}`, restoreUID, pod: target, volume: 'scratch', snapshotID: 'f'.repeat(64), sourceNamespace: APP }),
    );
    const name = pvr.metadata?.name ?? '';
    const done = await waitForPhase(() => pvrClient(k).get(NS, name), ['Completed', 'Failed', 'Canceled'], { timeoutMs: 120_000, description: `PVR ${name} finished` });
    expect(done.status?.phase).toBe('Failed');
    expect(done.status?.message).toMatch(/^data path restore failed: /);
    expect(done.status?.node).toBe(node);
    await waitFor(async () => (await k.core.readNamespacedPod({ namespace: NS, name }).catch(() => undefined)) === undefined, {
      timeoutMs: 30_000,
      description: `data-mover pod ${name} gone`,
    });
  }, 180_000);
});
