/**
 * What the node-agent cluster tests share: installing cairn with its node agent into a namespace of their own, a
 * Ready repository for a workload namespace, workload pods pinned to a node with a PVC and an emptyDir, PVBs and
 * PVRs made by hand exactly as the server makes them, and finding a pod volume's directory on the node's disk.
 */
import { randomFillSync } from 'node:crypto';
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { newPodVolumeBackup, newPodVolumeRestore, type PodVolumeBackup, type PodVolumeRestore } from '../../src/api/index.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import { ensureRepository } from '../../src/server/repository/ensure.js';
import { cairn } from '../support/cli.js';
import { clusterInfo, kubeConfig, kubectl } from '../support/cluster.js';
import { expectSameTree as expectSameTreeWith } from '../support/mover-fixture.js';
import { podVolumeDir } from '../support/node-paths.js';
import { writeCredentialsFile } from '../support/server-install.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';

/** cairn's image as the cluster runs it (this tree's image on real nodes, its code on the stand-in). */
export const image = (): string => clusterInfo().image;

export function kube(): Kube {
  return kubeFromConfig(kubeConfig());
}

export const pvbClient = (k: Kube) => veleroClients(k).podVolumeBackups;
export const pvrClient = (k: Kube) => veleroClients(k).podVolumeRestores;

/** Installs cairn with the node agent into `ns` (optionally with a node-agent ConfigMap) and waits until it is ready. */
export async function installCairn(opts: { ns: string; prefix: string; nodeAgentConfig?: object }): Promise<void> {
  const info = clusterInfo();
  const creds = writeCredentialsFile('cairn-na-it-');
  const args = [
    'install', '-n', opts.ns, '--provider', 'aws', '--bucket', info.s3.bucket, '--prefix', opts.prefix, '--secret-file', creds,
    '--backup-location-config', `region=${info.s3.region},s3Url=${info.s3.endpoint},s3ForcePathStyle=true`,
    '--use-node-agent', '--image', info.image, '--kubelet-root-dir', info.kubeletRootDir,
  ];
  if (opts.nodeAgentConfig) {
    await kubectl(['create', 'namespace', opts.ns]);
    await kubectl(['-n', opts.ns, 'create', 'configmap', 'node-agent-config', `--from-literal=config.json=${JSON.stringify(opts.nodeAgentConfig)}`]);
    args.push('--node-agent-configmap', 'node-agent-config');
  }
  const r = await cairn(args, { kubeconfig: info.kubeconfigPath, timeoutMs: 300_000 });
  expect(r.exitCode, r.stderr).toBe(0);
  if (info.runtime === 'local') await useOwnHealthPorts(opts.ns);
  await kubectl(['-n', opts.ns, 'rollout', 'status', 'deployment/cairn', '--timeout=240s'], { timeoutMs: 250_000 });
  await kubectl(['-n', opts.ns, 'rollout', 'status', 'daemonset/node-agent', '--timeout=240s'], { timeoutMs: 250_000 });
}

/**
 * On the kubelet stand-in pods share their node's address, so a second install on a shared cluster would find the
 * health ports taken by the first one's pods: give this install ports of its own (real nodes give every pod its own
 * address).
 */
async function useOwnHealthPorts(ns: string): Promise<void> {
  const base = 20_000 + Math.floor(Math.random() * 20_000);
  const patch = (port: number) =>
    JSON.stringify([
      { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: `--health-port=${port}` },
      { op: 'replace', path: '/spec/template/spec/containers/0/ports/0/containerPort', value: port },
    ]);
  await kubectl(['-n', ns, 'patch', 'deployment', 'cairn', '--type=json', '-p', patch(base)]);
  await kubectl(['-n', ns, 'patch', 'daemonset', 'node-agent', '--type=json', '-p', patch(base + 1)]);
}

/** The BackupRepository of (default location, volumeNamespace), initialised by the installed server. */
export async function readyRepository(k: Kube, ns: string, volumeNamespace: string): Promise<void> {
  await ensureRepository({ kube: k, namespace: ns, bsl: 'default', volumeNamespace, timeoutMs: 180_000 });
}

/** Removes finalizers left on PVBs/PVRs (a node agent gone before it could) and deletes the namespaces. */
export async function cleanUp(k: Kube, installNs: string, namespaces: string[]): Promise<void> {
  // For looking at a failed run: CAIRN_TEST_KEEP_NAMESPACES=1 leaves everything in place.
  if (process.env.CAIRN_TEST_KEEP_NAMESPACES === '1') return;
  for (const client of [pvbClient(k), pvrClient(k)] as const) {
    const items = await (client as ReturnType<typeof pvbClient>).list(installNs).catch(() => []);
    for (const o of items) {
      await (client as ReturnType<typeof pvbClient>).patch(installNs, o.metadata?.name ?? '', { metadata: { finalizers: null } }).catch(() => undefined);
    }
  }
  for (const ns of [...namespaces, installNs]) await kubectl(['delete', 'namespace', ns, '--wait=false'], { allowFailure: true });
  // The install's cluster-scoped RBAC is named after its namespace.
  for (const kind of ['clusterrolebinding', 'clusterrole']) {
    await kubectl(['delete', kind, `cairn-server-${installNs}`, `cairn-node-agent-${installNs}`, `cairn-restore-${installNs}`, '--ignore-not-found'], { allowFailure: true });
  }
}

export interface WorkloadOptions {
  ns: string;
  name: string;
  node: string;
  /** Adds a PVC volume `data` (claim `<name>-data`) besides the emptyDir `scratch`. */
  withClaim?: boolean;
  /** A restore-wait init container waiting for this restore UID. */
  restoreUID?: string;
}

/** A busybox pod pinned (by nodeSelector, so its claim is provisioned) to `node`, with an emptyDir and maybe a PVC. */
export async function startWorkload(k: Kube, opts: WorkloadOptions): Promise<V1Pod> {
  const volumes: object[] = [{ name: 'scratch', emptyDir: {} }];
  const mounts: { name: string; mountPath: string }[] = [{ name: 'scratch', mountPath: `/mnt/${opts.name}-scratch` }];
  const items: object[] = [];
  if (opts.withClaim) {
    items.push({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: `${opts.name}-data`, namespace: opts.ns },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    volumes.push({ name: 'data', persistentVolumeClaim: { claimName: `${opts.name}-data` } });
    mounts.push({ name: 'data', mountPath: `/mnt/${opts.name}-data` });
  }
  const initContainers = opts.restoreUID
    ? [{ name: 'restore-wait', image: image(), command: ['/cairn'], args: ['restore-helper', opts.restoreUID], volumeMounts: mounts.map((m) => ({ name: m.name, mountPath: `/restores/${m.name}` })) }]
    : undefined;
  items.push({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: opts.name, namespace: opts.ns },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': opts.node },
      terminationGracePeriodSeconds: 1,
      ...(initContainers ? { initContainers } : {}),
      containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'], volumeMounts: mounts }],
      volumes,
    },
  });
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
  return waitFor(
    async () => {
      const pod = await k.core.readNamespacedPod({ namespace: opts.ns, name: opts.name });
      if (opts.restoreUID) return pod.status?.initContainerStatuses?.[0]?.state?.running ? pod : undefined;
      return pod.status?.phase === 'Running' ? pod : undefined;
    },
    { timeoutMs: 90_000, description: `pod ${opts.ns}/${opts.name} ${opts.restoreUID ? 'in restore-wait' : 'Running'}` },
  );
}

/** The directory of a pod volume on the node's disk, as the test process (on the same machine) sees it (node-paths.ts). */
export async function volumeDirOnNode(_k: Kube, pod: V1Pod, volume: string): Promise<string> {
  return podVolumeDir(pod, volume);
}

/** Text, a few MiB of random bytes, many small files, a sub-directory, a symlink, modes and an old mtime. */
export function writeSampleData(dir: string, opts: { bigMiB?: number } = {}): void {
  mkdirSync(join(dir, 'sub', 'deeper'), { recursive: true });
  writeFileSync(join(dir, 'hello.txt'), `hello from ${dir}\n`);
  const big = Buffer.alloc(1 << 20);
  const chunks: Buffer[] = [];
  for (let i = 0; i < (opts.bigMiB ?? 3); i++) chunks.push(Buffer.from(randomFillSync(big)));
  writeFileSync(join(dir, 'random.bin'), Buffer.concat(chunks));
  for (let i = 0; i < 40; i++) writeFileSync(join(dir, 'sub', `small-${i}.txt`), `file ${i}\n`.repeat(i + 1));
  writeFileSync(join(dir, 'sub', 'deeper', 'script.sh'), '#!/bin/sh\necho hi\n', { mode: 0o750 });
  utimesSync(join(dir, 'hello.txt'), new Date('2020-01-02T03:04:05Z'), new Date('2020-01-02T03:04:05Z'));
  symlinkSync('../hello.txt', join(dir, 'sub', 'link'));
}

export { writeLargeData } from '../support/mover-fixture.js';

/** Expects `b` to hold what `a` holds, file times included; `skip` names entries of the top directory to leave out. */
export function expectSameTree(a: string, b: string, skip: string[] = []): void {
  expectSameTreeWith(a, b, { skip, mtimes: true });
}

/** A PVB exactly as the server creates it (the contract), for `volume` of `pod`. */
export function pvbFor(opts: { ns: string; backup: string; backupUID: string; pod: V1Pod; volume: string; pvc?: { name: string; uid: string } }): PodVolumeBackup {
  const { pod } = opts;
  const podNs = pod.metadata?.namespace ?? '';
  const podName = pod.metadata?.name ?? '';
  const podUID = pod.metadata?.uid ?? '';
  const pvb = newPodVolumeBackup({
    namespace: opts.ns,
    generateName: `${opts.backup}-`,
    labels: { 'velero.io/backup-name': opts.backup, 'velero.io/backup-uid': opts.backupUID, ...(opts.pvc ? { 'velero.io/pvc-uid': opts.pvc.uid } : {}) },
    ...(opts.pvc ? { annotations: { 'velero.io/pvc-name': opts.pvc.name } } : {}),
    spec: {
      node: pod.spec?.nodeName ?? '',
      pod: { kind: 'Pod', namespace: podNs, name: podName, uid: podUID },
      volume: opts.volume,
      backupStorageLocation: 'default',
      repoIdentifier: '',
      uploaderType: 'kopia',
      tags: { backup: opts.backup, 'backup-uid': opts.backupUID, pod: podName, 'pod-uid': podUID, ns: podNs, volume: opts.volume, ...(opts.pvc ? { 'pvc-uid': opts.pvc.uid } : {}) },
    },
  });
  return pvb;
}

export function pvrFor(opts: { ns: string; restore: string; restoreUID: string; pod: V1Pod; volume: string; snapshotID: string; sourceNamespace: string }): PodVolumeRestore {
  const { pod } = opts;
  const pvr = newPodVolumeRestore({
    namespace: opts.ns,
    generateName: `${opts.restore}-`,
    labels: { 'velero.io/restore-name': opts.restore, 'velero.io/restore-uid': opts.restoreUID, 'velero.io/pod-uid': pod.metadata?.uid ?? '' },
    spec: {
      pod: { kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
      volume: opts.volume,
      backupStorageLocation: 'default',
      repoIdentifier: '',
      uploaderType: 'kopia',
      snapshotID: opts.snapshotID,
      sourceNamespace: opts.sourceNamespace,
    },
  });
  return pvr;
}

/** Waits until the CR reaches one of `phases`, and returns it. */
export async function waitForPhase<T extends { status?: { phase?: string | undefined } | undefined }>(
  get: () => Promise<T | undefined>,
  phases: string[],
  opts: { timeoutMs: number; description: string },
): Promise<T> {
  return waitFor(async () => {
    const o = await get();
    return o && phases.includes(o.status?.phase ?? '') ? o : undefined;
  }, opts);
}

/** The node-agent pod on `node`. */
export async function nodeAgentPod(k: Kube, ns: string, node: string): Promise<V1Pod> {
  const pods = await k.core.listNamespacedPod({ namespace: ns, labelSelector: 'name=node-agent' });
  const pod = pods.items.find((p) => p.spec?.nodeName === node && !p.metadata?.deletionTimestamp);
  if (!pod) throw new Error(`no node-agent pod on ${node}`);
  return pod;
}
