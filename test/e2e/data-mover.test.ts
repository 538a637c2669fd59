/**
 * CSI snapshot data movement end to end through the CLI on real nodes (2 kubelets on containerd, CSI enabled, MinIO): a
 * StatefulSet of 2 replicas (one per node) whose volumeClaimTemplates use csi-hostpath-sc, holding large random
 * files, many small ones, odd modes, a non-root owner, set mtimes and a symlink, plus a Block-mode claim a pod wrote
 * random bytes into. `backup create --snapshot-move-data --wait` snapshots every claim and moves the data through the
 * node-agent's DataUploads; the backup waits in WaitingForPluginOperations while a resources-only backup runs to
 * Completed; `backup describe --details` shows the DataUploads while they run and the moved volumes after. The
 * namespace and its PVs are deleted and restored: every file comes back byte for byte with its mode, owner and
 * mtime, and the block device's bytes. Then the faults: the data-mover pod deleted and its container killed through
 * containerd (DataUpload Failed with a reason, backup PartiallyFailed), the node agent restarted mid-upload (resumed,
 * Completed) and the server restarted mid-backup (Completed). Volume contents are written and read where the CSI
 * driver keeps them on the host (its volumes directory in the run directory, test/support/csi-volume.ts).
 *
 * The node agent caps each backup pod's writes to the store (ConfigMap `uploadBytesPerSecond`), so every upload takes
 * seconds whatever the machine's speed: "while it runs" and "mid-upload" are then states the test can see and act
 * in, not races against a fast data path.
 */
import { createHash, randomBytes, randomFillSync } from 'node:crypto';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp, installCairn, kube as newKube } from '../integration/node-agent-support.js';
import { cairn, type CliResult, locationAvailable } from '../support/cli.js';
import { applyWithNamespace, clusterInfo, deleteNamespace, dropFinalizers, kubectl } from '../support/cluster.js';
import { enableTestBedCsi } from '../support/test-bed-csi.js';
import { hostpathVolumePath, type VolumeMode } from '../support/csi-volume.js';
import { killContainer } from '../support/node-runtime.js';
import { fileBytes, MiB, readTree, timeMismatches, withoutTimes, writeDataset, type Tree } from '../support/volume-tree.js';
import { sampleWhile, StopWaiting, waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-dm-${RUN}`;
const APP = `dm-app-${RUN}`;
const FAULT = `dm-fault-${RUN}`;
const FIRST = 'dm-1';
const RESOURCES_ONLY = 'dm-resources';
const RESTORE = 'dm-1-restore';
const STORAGE_CLASS = 'csi-hostpath-sc';
const CLAIMS = ['data-web-0', 'data-web-1'] as const;
const BLOCK_CLAIM = 'raw';
const BLOCK_MIB = 64;
/** Random data the block writer puts at the start of its device (after an 8-byte marker). */
const BLOCK_WRITTEN_MIB = 24;
/** Fresh random data written into the fault claim before each fault, so each upload has real work to do. */
const FAULT_MIB = 64;
/**
 * The backup pods' upload cap: 24 to 35 MiB per claim of the first backup takes 8-12 s, a fault upload 21 s. A
 * `describe --details` takes several seconds on a busy machine (npm test runs four clusters on two cores): at 5 MiB/s
 * the uploads started and ended between two of them.
 */
const UPLOAD_BYTES_PER_SECOND = 3 * MiB;
const TERMINAL = ['Completed', 'Failed', 'Canceled'];
const BACKUP_DONE = ['Completed', 'PartiallyFailed', 'Failed', 'FailedValidation'];

interface DuJson {
  metadata: { name: string; uid: string; labels?: Record<string, string> };
  spec: { sourcePVC: string; sourceNamespace: string; cancel?: boolean; csiSnapshot?: { volumeSnapshot: string } };
  status?: { phase?: string; message?: string; node?: string; snapshotID?: string; progress?: { totalBytes?: number; bytesDone?: number } };
}

interface DdJson {
  metadata: { name: string };
  spec: { targetVolume: { pvc: string; namespace: string }; snapshotID: string };
  status?: { phase?: string; message?: string; node?: string };
}

interface BackupJson {
  status?: { phase?: string; errors?: number; backupItemOperationsAttempted?: number; backupItemOperationsCompleted?: number; backupItemOperationsFailed?: number };
}

interface PodJson {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse((await kubectl([...args, '-o', 'json'])).stdout) as T;
}

function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Writes `mib` MiB of fresh random bytes into `path`, 8 MiB at a time. */
function writeRandomFile(path: string, mib: number): void {
  const chunk = Buffer.alloc(8 * MiB);
  const fd = openSync(path, 'w');
  try {
    for (let left = mib; left > 0; left -= 8) writeSync(fd, randomFillSync(chunk), 0, Math.min(8, left) * MiB);
  } finally {
    closeSync(fd);
  }
}

function appObjects(): string {
  return `apiVersion: apps/v1
kind: StatefulSet
metadata: { name: web, namespace: ${APP} }
spec:
  replicas: 2
  serviceName: web
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      terminationGracePeriodSeconds: 1
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - { labelSelector: { matchLabels: { app: web } }, topologyKey: kubernetes.io/hostname }
      containers:
        - name: app
          image: busybox
          command: [sh, -c, "exec sleep 100000"]
          volumeMounts: [{ name: data, mountPath: /e2e-dm/data }]
  volumeClaimTemplates:
    - metadata: { name: data }
      spec: { storageClassName: ${STORAGE_CLASS}, accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: ${BLOCK_CLAIM}, namespace: ${APP} }
spec: { storageClassName: ${STORAGE_CLASS}, volumeMode: Block, accessModes: [ReadWriteOnce], resources: { requests: { storage: ${BLOCK_MIB}Mi } } }
---
apiVersion: v1
kind: Pod
metadata: { name: raw-writer, namespace: ${APP} }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: busybox
      # Writes a marker and random bytes once (a restored device already carries them), then prints the device's hash.
      command:
        - sh
        - -c
        - >-
          if [ "$(head -c 8 /dev/xvda)" != CAIRNBLK ]; then
          { printf CAIRNBLK; head -c ${BLOCK_WRITTEN_MIB * MiB} /dev/urandom; } | dd of=/dev/xvda bs=1048576 conv=notrunc 2>/dev/null; sync; fi;
          sha256sum /dev/xvda; exec sleep 100000
      volumeDevices: [{ name: raw, devicePath: /dev/xvda }]
  volumes: [{ name: raw, persistentVolumeClaim: { claimName: ${BLOCK_CLAIM} } }]
`;
}

function faultObjects(): string {
  return `apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: big, namespace: ${FAULT} }
spec: { storageClassName: ${STORAGE_CLASS}, accessModes: [ReadWriteOnce], resources: { requests: { storage: 4Gi } } }
---
apiVersion: v1
kind: Pod
metadata: { name: big, namespace: ${FAULT} }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - { name: app, image: busybox, command: [sh, -c, "exec sleep 100000"], volumeMounts: [{ name: big, mountPath: /e2e-dm/big }] }
  volumes: [{ name: big, persistentVolumeClaim: { claimName: big } }]
`;
}

describe('CSI snapshot data movement end to end through the CLI', () => {
  let kubeconfig: string;
  let runDir: string;
  const run = (args: string[]): Promise<CliResult> => cairn([...args, '-n', NS], { kubeconfig, timeoutMs: 300_000 });
  /** The trees of the StatefulSet's claims as backed up, by claim name. */
  const expected = new Map<string, Tree>();
  let blockSha = '';

  /** The host path of a claim's volume (directory, or image file for a Block claim). */
  async function claimPath(ns: string, claim: string): Promise<string> {
    const pvc = await getJson<{ spec: { volumeName?: string; volumeMode?: VolumeMode } }>(['get', 'pvc', claim, '-n', ns]);
    if (!pvc.spec.volumeName) throw new Error(`claim ${ns}/${claim} is not bound`);
    const pv = await getJson<{ spec: { csi?: { volumeHandle: string } } }>(['get', 'pv', pvc.spec.volumeName]);
    return hostpathVolumePath(runDir, pv.spec.csi?.volumeHandle ?? '', pvc.spec.volumeMode ?? 'Filesystem');
  }

  async function podsRunning(ns: string, want: number): Promise<PodJson[] | undefined> {
    const pods = (await getJson<{ items: PodJson[] }>(['get', 'pods', '-n', ns])).items;
    return pods.length === want && pods.every((p) => p.status?.phase === 'Running') ? pods : undefined;
  }

  async function dusOf(backup: string): Promise<DuJson[]> {
    return (await getJson<{ items: DuJson[] }>(['get', 'datauploads', '-n', NS, '-l', `velero.io/backup-name=${backup}`])).items;
  }

  async function ddsOf(restore: string): Promise<DdJson[]> {
    return (await getJson<{ items: DdJson[] }>(['get', 'datadownloads', '-n', NS, '-l', `velero.io/restore-name=${restore}`])).items;
  }

  async function backupPhase(name: string): Promise<string> {
    // kubectl, not the CLI: a Go binary starts in a fraction of the CLI's time, so short phases are not missed.
    const r = await kubectl(['get', 'backup', name, '-n', NS, '-o', 'json', '--ignore-not-found'], { allowFailure: true });
    return r.exitCode === 0 && r.stdout.trim() ? ((JSON.parse(r.stdout) as BackupJson).status?.phase ?? 'New') : '';
  }

  async function backupDone(name: string, timeoutMs = 240_000): Promise<string> {
    return waitFor(async () => {
      const phase = await backupPhase(name);
      return BACKUP_DONE.includes(phase) ? phase : undefined;
    }, { timeoutMs, intervalMs: 500, description: `backup ${name} finished` });
  }

  /** The hash the block writer printed for its device (the restored pod prints it again from the restored device). */
  async function printedBlockSha(): Promise<string> {
    return waitFor(async () => {
      const logs = await kubectl(['logs', 'raw-writer', '-n', APP], { allowFailure: true });
      return /^([0-9a-f]{64}) {2}\/dev\/xvda$/m.exec(logs.stdout)?.[1];
    }, { timeoutMs: 120_000, intervalMs: 1000, description: 'raw-writer printed its device hash' });
  }

  /** A fault backup of the fault claim (fresh random data first), returned once its DataUpload is InProgress. */
  async function faultBackupInProgress(name: string): Promise<DuJson> {
    const dir = await claimPath(FAULT, 'big');
    rmSync(join(dir, 'payload.bin'), { force: true });
    writeRandomFile(join(dir, 'payload.bin'), FAULT_MIB);
    const create = await run(['backup', 'create', name, '--include-namespaces', FAULT, '--snapshot-move-data']);
    expect(create.exitCode, `${create.stdout}\n${create.stderr}`).toBe(0);
    return waitFor(async () => {
      const [du] = await dusOf(name);
      if (du && TERMINAL.includes(du.status?.phase ?? '')) throw new StopWaiting(new Error(`DataUpload ${du.metadata.name} ended ${du.status?.phase} before it was seen InProgress: ${du.status?.message ?? ''}`));
      return du?.status?.phase === 'InProgress' ? du : undefined;
    }, { timeoutMs: 180_000, intervalMs: 200, description: `the DataUpload of backup ${name} InProgress` });
  }

  async function waitDuDone(name: string, timeoutMs = 240_000): Promise<DuJson> {
    return waitFor(async () => {
      const du = await getJson<DuJson>(['get', 'dataupload', name, '-n', NS]);
      return TERMINAL.includes(du.status?.phase ?? '') ? du : undefined;
    }, { timeoutMs, intervalMs: 500, description: `DataUpload ${name} finished` });
  }

  async function readyPod(selector: string, node: string | undefined, not: string): Promise<PodJson | undefined> {
    const pods = (await getJson<{ items: PodJson[] }>(['get', 'pods', '-n', NS, '-l', selector])).items;
    return pods.find(
      (p) => p.metadata.uid !== not && !p.metadata.deletionTimestamp && (!node || p.spec.nodeName === node) && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
  }

  beforeAll(async () => {
    const info = clusterInfo();
    kubeconfig = info.kubeconfigPath;
    runDir = info.runDir;
    expect(info.nodes.length).toBeGreaterThanOrEqual(2);
    await enableTestBedCsi(runDir);
    await installCairn({ ns: NS, prefix: `e2e-dm-${RUN}`, nodeAgentConfig: { uploadBytesPerSecond: UPLOAD_BYTES_PER_SECOND } });
    await locationAvailable(run);
    await applyWithNamespace(APP, appObjects());
    await applyWithNamespace(FAULT, faultObjects());
    const pods = await waitFor(() => podsRunning(APP, 3), { timeoutMs: 180_000, intervalMs: 1000, description: 'web-0, web-1 and raw-writer Running' });
    const webNodes = pods.filter((p) => p.metadata.name.startsWith('web-')).map((p) => p.spec.nodeName);
    expect(new Set(webNodes).size, 'one web replica per node').toBe(2);
    for (const [i, claim] of CLAIMS.entries()) {
      const dir = await claimPath(APP, claim);
      writeDataset(dir, { large: [24, 8], small: 400, seed: i * 1000 });
      expected.set(claim, readTree(dir));
    }
    blockSha = await printedBlockSha();
    await waitFor(() => podsRunning(FAULT, 1), { timeoutMs: 180_000, intervalMs: 1000, description: 'the fault pod Running' });
  }, 600_000);

  afterAll(async () => {
    await dropFinalizers(NS, ['restores', 'datauploads', 'datadownloads']);
    await cleanUp(newKube(), NS, [APP, FAULT]);
  });

  it('moves every claim\'s snapshot data: WaitingForPluginOperations while a resources-only backup completes; describe --details shows the DataUploads live and the moved volumes after', async () => {
    // The block writer's hash is of the whole device: the test reads the same bytes where the driver keeps them.
    expect(sha256File(await claimPath(APP, BLOCK_CLAIM))).toBe(blockSha);

    const phasesSeen = new Set<string>();
    const liveTexts: string[] = [];
    let done = false;
    const create = run(['backup', 'create', FIRST, '--include-namespaces', APP, '--snapshot-move-data', '--wait']).finally(() => {
      done = true;
    });
    const watch = sampleWhile(create, 250, async () => {
      const d = await run(['backup', 'describe', FIRST, '--details']);
      const phase = /^Phase:\s+(\S+)/m.exec(d.stdout)?.[1];
      if (phase) phasesSeen.add(phase);
      if (phase === 'InProgress' || phase === 'WaitingForPluginOperations') liveTexts.push(d.stdout);
    });

    // While the data moves, another backup (resources only) starts and completes.
    await waitFor(async () => {
      const phase = await backupPhase(FIRST);
      if (done && phase !== 'WaitingForPluginOperations') throw new StopWaiting(new Error(`backup ${FIRST} ended ${phase || 'missing'} without waiting for its data: ${(await create).stdout}${(await create).stderr}`));
      return phase === 'WaitingForPluginOperations';
    }, {
      timeoutMs: 180_000,
      intervalMs: 200,
      description: `backup ${FIRST} WaitingForPluginOperations`,
    });
    const second = await run(['backup', 'create', RESOURCES_ONLY, '--include-namespaces', APP, '--snapshot-volumes=false', '--wait']);
    expect(second.exitCode, `${second.stdout}\n${second.stderr}`).toBe(0);
    expect(second.stdout).toContain('Backup completed with status: Completed.');
    expect(['WaitingForPluginOperations', 'Finalizing'], `${FIRST} when ${RESOURCES_ONLY} completed`).toContain(await backupPhase(FIRST));
    expect(await dusOf(RESOURCES_ONLY)).toEqual([]);

    const result = await create;
    await watch;
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain('Backup completed with status: Completed.');
    expect([...phasesSeen]).toContain('WaitingForPluginOperations');

    // One DataUpload per claim, each Completed with its snapshot and every byte counted.
    const dus = await dusOf(FIRST);
    expect(dus.map((d) => `${d.spec.sourceNamespace}/${d.spec.sourcePVC}:${d.status?.phase}`).sort()).toEqual(
      [...CLAIMS, BLOCK_CLAIM].map((c) => `${APP}/${c}:Completed`).sort(),
    );
    for (const du of dus) {
      const bytes = du.spec.sourcePVC === BLOCK_CLAIM ? BLOCK_MIB * MiB : fileBytes(expected.get(du.spec.sourcePVC) ?? {});
      expect(du.status?.snapshotID, du.metadata.name).toMatch(/^[0-9a-f]{8,}$/);
      expect(du.status?.progress?.totalBytes, du.metadata.name).toBe(bytes);
      expect(du.status?.progress?.bytesDone, du.metadata.name).toBe(bytes);
    }

    // While the backup waited, describe --details listed every claim with its DataUpload, and progress while one ran.
    const live = liveTexts.filter((t) => [...CLAIMS, BLOCK_CLAIM].every((c) => t.includes(`    ${APP}/${c}:\n      Data Movement:\n`)));
    expect(live.length, `describe while waiting:\n${liveTexts.join('\n----\n')}`).toBeGreaterThan(0);
    expect(live.every((t) => (t.match(/^ {8}Data Upload: \S+$/gm) ?? []).length === 3), live.join('\n----\n')).toBe(true);
    expect(live.some((t) => /^ {8}Phase: In Progress\n(?: {8}Node: \S+\n)? {8}Progress: \d+ of \d+ bytes/m.test(t)), live.join('\n----\n')).toBe(true);

    // After: the moved volumes, each with its data mover, size and result.
    const d = await run(['backup', 'describe', FIRST, '--details']);
    expect(d.exitCode, d.stderr).toBe(0);
    for (const du of dus) {
      const at = d.stdout.indexOf(`    ${APP}/${du.spec.sourcePVC}:\n`);
      expect(at, `${APP}/${du.spec.sourcePVC} in\n${d.stdout}`).toBeGreaterThan(-1);
      expect(d.stdout.slice(at)).toMatch(
        new RegExp(`^ {4}${APP}/${du.spec.sourcePVC}:\\n {6}Data Movement:\\n {8}Operation ID: du-\\S+\\n {8}Data Mover: velero\\n {8}Uploader Type: kopia\\n {8}Moved data Size \\(bytes\\): ${du.status?.progress?.totalBytes ?? '?'}\\n {8}Result: succeeded\\n`),
      );
    }

    // The local snapshots are not kept: the backup's VolumeSnapshots (deleted at finalization; the snapshot
    // controller removes the storage's snapshot first) and the node agent's temporary objects all go.
    await waitFor(
      async () => {
        const left = await getJson<{ items: { metadata: { namespace: string; name: string } }[] }>(['get', 'volumesnapshots', '-A', '-l', `velero.io/backup-name=${FIRST}`]);
        const exposed = await getJson<{ items: unknown[] }>(['get', 'volumesnapshots', '-n', NS]);
        const tempClaims = await getJson<{ items: unknown[] }>(['get', 'pvc', '-n', NS]);
        if (left.items.length + exposed.items.length + tempClaims.items.length === 0) return true;
        throw new Error(`left: ${left.items.map((v) => `${v.metadata.namespace}/${v.metadata.name}`).join(', ')}; ${exposed.items.length} VolumeSnapshots and ${tempClaims.items.length} PVCs in ${NS}`);
      },
      { timeoutMs: 120_000, intervalMs: 1000, description: `the VolumeSnapshots of ${FIRST} and the temporary claims gone` },
    );
  }, 300_000);

  it('restores the deleted namespace and its volumes: every file matches in bytes, mode, owner and mtime, and the block device byte for byte', async () => {
    const pvs = (await getJson<{ items: { spec: { volumeName?: string } }[] }>(['get', 'pvc', '-n', APP])).items.map((p) => p.spec.volumeName ?? '');
    await deleteNamespace(APP, 180_000);
    await waitFor(async () => (await kubectl(['get', 'pv', ...pvs, '-o', 'name', '--ignore-not-found'], { allowFailure: true })).stdout.trim() === '', {
      timeoutMs: 120_000,
      intervalMs: 1000,
      description: `the PVs of ${APP} deleted`,
    });

    const r = await run(['restore', 'create', RESTORE, '--from-backup', FIRST, '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('Restore completed with status: Completed.');
    const dds = await ddsOf(RESTORE);
    expect(dds.map((d) => `${d.spec.targetVolume.namespace}/${d.spec.targetVolume.pvc}:${d.status?.phase}`).sort()).toEqual(
      [...CLAIMS, BLOCK_CLAIM].map((c) => `${APP}/${c}:Completed`).sort(),
    );

    // The claims were bound to the restored volumes, which are new ones (the old PVs were deleted).
    for (const claim of [...CLAIMS, BLOCK_CLAIM]) {
      const pvc = await getJson<{ spec: { volumeName?: string }; status?: { phase?: string } }>(['get', 'pvc', claim, '-n', APP]);
      expect(pvc.status?.phase, claim).toBe('Bound');
      expect(pvs, claim).not.toContain(pvc.spec.volumeName);
    }
    for (const claim of CLAIMS) {
      const got = readTree(await claimPath(APP, claim));
      const want = expected.get(claim) ?? {};
      // The volume root's time is the restore's, as with fs-backup; everything else is compared exactly.
      const { ['.']: _gotRoot, ...gotRest } = withoutTimes(got);
      const { ['.']: _wantRoot, ...wantRest } = withoutTimes(want);
      expect(gotRest, claim).toEqual(wantRest);
      expect(timeMismatches(want, got), `${claim} mtimes`).toEqual([]);
    }
    expect(sha256File(await claimPath(APP, BLOCK_CLAIM)), 'block device bytes').toBe(blockSha);

    // The workload starts on its restored data: the StatefulSet's pods and the block pod, which hashes its device again.
    const pods = await waitFor(() => podsRunning(APP, 3), { timeoutMs: 180_000, intervalMs: 1000, description: 'restored pods Running' });
    expect(await printedBlockSha()).toBe(blockSha);
    // The class binds WaitForFirstConsumer: each claim's data was moved on the node its pod was scheduled to.
    const podOf = (claim: string) => (claim === BLOCK_CLAIM ? 'raw-writer' : claim.replace(/^data-/, ''));
    for (const dd of dds) {
      const pod = pods.find((p) => p.metadata.name === podOf(dd.spec.targetVolume.pvc));
      expect(dd.status?.node, dd.spec.targetVolume.pvc).toBe(pod?.spec.nodeName);
    }

    const d = await run(['restore', 'describe', RESTORE, '--details']);
    expect(d.exitCode, d.stderr).toBe(0);
    expect(d.stdout).toContain(`Data Movement Restores:\n  Completed:\n${[...CLAIMS, BLOCK_CLAIM].sort().map((c) => `    ${APP}/${c}\n`).join('')}`);
    for (const dd of dds) expect(d.stdout).toMatch(new RegExp(`^ {2}${APP}/${dd.spec.targetVolume.pvc}:\\n {4}Data Download: +${dd.metadata.name}\\n {4}Phase: +Completed\\n`, 'm'));
  }, 420_000);

  it('a data-mover pod killed mid-upload fails its DataUpload with a reason, and the backup is PartiallyFailed', async () => {
    const du = await faultBackupInProgress('dm-kill');
    await kubectl(['delete', 'pod', du.metadata.name, '-n', NS, '--grace-period=0', '--force', '--wait=false']);
    const ended = await waitDuDone(du.metadata.name);
    expect(ended.status?.phase, ended.status?.message).toBe('Failed');
    // The reason names the data-mover pod, as for a pod volume backup whose pod went.
    expect(ended.status?.message ?? '').toContain(`${NS}/${du.metadata.name}`);
    expect(await backupDone('dm-kill')).toBe('PartiallyFailed');
    const d = await run(['backup', 'describe', 'dm-kill', '--details']);
    expect(d.stdout).toMatch(new RegExp(`^ {4}${FAULT}/big:\\n {6}Data Movement:\\n(?: {8}.*\\n)*? {8}Result: failed\\n`, 'm'));
  }, 300_000);

  it('a data-mover container killed mid-upload (SIGKILL through containerd, as a crash or the OOM killer would) fails its DataUpload with the exit code', async () => {
    const du = await faultBackupInProgress('dm-crash');
    const pod = await getJson<PodJson & { status?: { containerStatuses?: { name: string; containerID?: string; state?: { running?: object } }[] } }>(['get', 'pod', du.metadata.name, '-n', NS]);
    await killContainer(pod, du.metadata.uid);
    const ended = await waitDuDone(du.metadata.name);
    expect(ended.status?.phase, ended.status?.message).toBe('Failed');
    expect(ended.status?.message ?? '').toContain(`data-mover pod ${NS}/${du.metadata.name} ended with exit code 137`);
    expect(await backupDone('dm-crash')).toBe('PartiallyFailed');
  }, 300_000);

  it('a node agent restarted mid-upload is replaced, and the new one resumes the DataUpload to Completed', async () => {
    const du = await faultBackupInProgress('dm-agent');
    const node = du.status?.node ?? '';
    const before = await readyPod('name=node-agent', node, '');
    expect(before, `node-agent on ${node}`).toBeDefined();
    await kubectl(['delete', 'pod', before?.metadata.name ?? '', '-n', NS, '--grace-period=0', '--force', '--wait=false']);
    await waitFor(() => readyPod('name=node-agent', node, before?.metadata.uid ?? ''), { timeoutMs: 180_000, intervalMs: 500, description: `a new ready node-agent on ${node}` });
    const ended = await waitDuDone(du.metadata.name);
    expect(ended.status?.phase, ended.status?.message).toBe('Completed');
    expect(ended.status?.progress?.bytesDone).toBeGreaterThanOrEqual(FAULT_MIB * MiB);
    expect(await backupDone('dm-agent')).toBe('Completed');
  }, 300_000);

  it('a server restarted mid-backup picks the backup up again, and it completes', async () => {
    await faultBackupInProgress('dm-server');
    const before = await readyPod('deploy=cairn', undefined, '');
    expect(before, 'the server pod').toBeDefined();
    await kubectl(['delete', 'pod', before?.metadata.name ?? '', '-n', NS, '--grace-period=0', '--force', '--wait=false']);
    await waitFor(() => readyPod('deploy=cairn', undefined, before?.metadata.uid ?? ''), { timeoutMs: 180_000, intervalMs: 500, description: 'a new ready server' });
    expect(await backupDone('dm-server')).toBe('Completed');
    const [du] = await dusOf('dm-server');
    expect(du?.status?.phase, du?.status?.message).toBe('Completed');
    const d = await run(['backup', 'describe', 'dm-server', '--details']);
    expect(d.stdout).toMatch(new RegExp(`^ {4}${FAULT}/big:\\n {6}Data Movement:\\n(?: {8}.*\\n)*? {8}Result: succeeded\\n`, 'm'));
  }, 300_000);
});
