/**
 * A restore must never report success for data it did not bring back. On the local cluster with the server and node
 * agent installed: a backup of a pod with two fs-backup volumes where one volume's PodVolumeBackup is canceled
 * mid-upload (the node-agent ConfigMap caps uploads, so "mid-upload" is a state the test sees), so the backup ends
 * PartiallyFailed. The app namespace is deleted and restored: the volume that was backed up comes back byte for byte,
 * the canceled one is listed in the restore's warnings and in `restore describe` (not restored, and why), and the
 * restore ends PartiallyFailed rather than Completed.
 */
import { randomBytes } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, newBackup, newRestore, parseBackup, parseRestore, type Backup, type PodVolumeBackup, type Restore } from '../../src/api/index.js';
import type { Kube } from '../../src/kube/client.js';
import { customClient } from '../../src/kube/custom.js';
import { cairn } from '../support/cli.js';
import { clusterInfo, kubectl } from '../support/cluster.js';
import { readTree, withoutTimes, type Tree } from '../support/volume-tree.js';
import { waitFor } from '../support/wait.js';
import { cleanUp, installCairn, kube as makeKube, pvbClient, startWorkload, volumeDirOnNode, writeLargeData, writeSampleData } from './node-agent-support.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-rfv-${RUN}`;
const APP = `rfv-app-${RUN}`;
const BACKUP = `rfv-${RUN}`;
const RESTORE = `rfv-${RUN}-restore`;
/** 64 MiB at 4 MiB/s: the scratch volume uploads for 16 s, long enough to cancel it on the way. */
const UPLOAD_BYTES_PER_SECOND = 4 << 20;

let k: Kube;
let node: string;
let dataBefore: Tree;
const backups = () => customClient<Backup>(k, Kinds.Backup, parseBackup);
const restores = () => customClient<Restore>(k, Kinds.Restore, parseRestore);

beforeAll(async () => {
  k = makeKube();
  node = clusterInfo().nodes[0]!.name;
  await installCairn({ ns: NS, prefix: `restore-failed-volume-it-${RUN}`, nodeAgentConfig: { uploadBytesPerSecond: UPLOAD_BYTES_PER_SECOND } });
  await kubectl(['create', 'namespace', APP]);
  const pod: V1Pod = await startWorkload(k, { ns: APP, name: 'web', node, withClaim: true });
  const dataDir = await volumeDirOnNode(k, pod, 'data');
  writeSampleData(dataDir, { bigMiB: 1 });
  dataBefore = readTree(dataDir);
  writeLargeData(await volumeDirOnNode(k, pod, 'scratch'), 64);
}, 420_000);

afterAll(async () => {
  if (k) await cleanUp(k, NS, [APP]);
});

describe('restoring a backup whose pod volume backup was canceled', () => {
  it('the backup ends PartiallyFailed when one of its PodVolumeBackups is canceled mid-upload', async () => {
    await backups().create(newBackup({ namespace: NS, name: BACKUP, spec: { includedNamespaces: [APP], defaultVolumesToFsBackup: true, storageLocation: 'default' } }));
    const uploading = await waitFor(
      async () => {
        const pvbs = await pvbClient(k).list(NS, `velero.io/backup-name=${BACKUP}`);
        return pvbs.find((p: PodVolumeBackup) => p.spec.volume === 'scratch' && p.status?.phase === 'InProgress' && (p.status.progress?.bytesDone ?? 0) > 0);
      },
      { timeoutMs: 240_000, intervalMs: 200, description: 'the scratch volume uploading' },
    );
    await pvbClient(k).patch(NS, uploading.metadata.name ?? '', { spec: { cancel: true } });
    const done = await waitFor(
      async () => {
        const b = await backups().get(NS, BACKUP);
        return ['Completed', 'PartiallyFailed', 'Failed'].includes(b?.status?.phase ?? '') ? b : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1_000, description: `backup ${BACKUP} finished` },
    );
    expect(done.status?.phase).toBe('PartiallyFailed');
    const pvbs = await pvbClient(k).list(NS, `velero.io/backup-name=${BACKUP}`);
    expect(Object.fromEntries(pvbs.map((p) => [p.spec.volume, p.status?.phase]))).toEqual({ data: 'Completed', scratch: 'Canceled' });
  }, 600_000);

  it('the restore brings back what was backed up, lists the canceled volume as not restored, and is PartiallyFailed', async () => {
    await kubectl(['delete', 'namespace', APP, '--wait=true', '--timeout=180s'], { timeoutMs: 200_000 });
    await restores().create(newRestore({ namespace: NS, name: RESTORE, spec: { backupName: BACKUP } }));
    const done = await waitFor(
      async () => {
        const r = await restores().get(NS, RESTORE);
        return ['Completed', 'PartiallyFailed', 'Failed'].includes(r?.status?.phase ?? '') ? r : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1_000, description: `restore ${RESTORE} finished` },
    );
    expect(done.status?.phase).toBe('PartiallyFailed');
    expect(done.status?.errors).toBeGreaterThanOrEqual(1);
    expect(done.status?.warnings).toBeGreaterThanOrEqual(1);

    // The volume whose backup completed is back, byte for byte.
    const pod = await waitFor(
      async () => {
        const p = await k.core.readNamespacedPod({ namespace: APP, name: 'web' });
        return p.status?.phase === 'Running' ? p : undefined;
      },
      { timeoutMs: 120_000, description: 'restored pod Running' },
    );
    const dataAfter = readTree(await volumeDirOnNode(k, pod, 'data'));
    expect(withoutTimes(dataAfter)).toEqual(withoutTimes(dataBefore));

    // The canceled one is named, with why, in the warnings and in describe.
    const kubeconfig = clusterInfo().kubeconfigPath;
    const text = await cairn(['restore', 'describe', RESTORE, '-n', NS], { kubeconfig });
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Phase:\s+PartiallyFailed/);
    expect(text.stdout).toContain('Volumes Not Restored:');
    expect(text.stdout).toMatch(new RegExp(`${APP}/web: volume scratch:\\s+not restored: its backup \\(PodVolumeBackup ${BACKUP}-[a-z0-9]+\\) was canceled`));
    expect(text.stdout).toMatch(new RegExp(`volume "scratch" of pod web was not restored: its backup \\(PodVolumeBackup ${BACKUP}-[a-z0-9]+\\) was canceled`));
    expect(text.stdout).toContain('1 volume(s) were not restored because their backup failed or was canceled');
    const json = JSON.parse((await cairn(['restore', 'describe', RESTORE, '-n', NS, '-o', 'json'], { kubeconfig })).stdout) as {
      volumeInfo: { notRestored?: string; pvrInfo?: { volumeName: string } }[] | null;
    };
    expect(json.volumeInfo?.filter((v) => v.notRestored).map((v) => v.pvrInfo?.volumeName)).toEqual(['scratch']);
  }, 600_000);
});
