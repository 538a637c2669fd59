/**
 * What the in-pod data mover's integration tests share (`pod-volume backup|restore` and `data-mover backup|restore`
 * run as local processes): a namespace with cairn's CRDs, the S3 credentials, the repository password and a storage
 * location over the test bucket, the repository a BackupRepository controller would have initialised, the mover
 * started as its pod's container would run it, the Events it records in order, and the sample volume a restore must
 * reproduce. The tests play the node agent themselves.
 */
import { spawn } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { CoreV1Event } from '@kubernetes/client-node';
import { allCrds, crdAsClientModel, type BackupStorageLocation } from '../../src/api/index.js';
import { Repository } from '../../src/datapath/repository.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import { openRepositoryStore } from '../../src/storage/repository-store.js';
import { clusterInfo, kubeConfig, kubectl } from './cluster.js';
import { bucketLocation, credentialsSecret } from './in-process-server.js';
import { deletePrefix } from './server-install.js';
import { veleroClients } from './velero-clients.js';
import { waitFor } from './wait.js';

const RUN_JS = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

/** The namespace of the volumes backed up (their repository's volume namespace). */
export const VOLUME_NAMESPACE = 'app';

export interface MoverNamespace {
  kube: Kube;
  kubeconfig: string;
  location: BackupStorageLocation;
}

/**
 * Creates cairn's CRDs (waiting until `plurals` are established), the namespace, the two Secrets, the location
 * `default` under `prefix`, and initialises the repository of VOLUME_NAMESPACE with `password`.
 */
export async function setUpMoverNamespace(o: { namespace: string; prefix: string; password: string; plurals: readonly string[] }): Promise<MoverNamespace> {
  const info = clusterInfo();
  const kube = kubeFromConfig(kubeConfig());
  for (const crd of allCrds()) {
    try {
      await kube.apiext.createCustomResourceDefinition({ body: crdAsClientModel(structuredClone(crd)) });
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
  for (const plural of [...o.plurals, 'backupstoragelocations']) {
    await waitFor(async () => {
      const crd = await kube.apiext.readCustomResourceDefinition({ name: `${plural}.velero.io` });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, { timeoutMs: 30_000, description: `CRD ${plural} established` });
  }
  await kubectl(['create', 'namespace', o.namespace]);
  await kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        credentialsSecret(o.namespace),
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'velero-repo-credentials', namespace: o.namespace }, stringData: { 'repository-password': o.password } },
      ],
    }),
  });
  const location = await veleroClients(kube).locations.create(bucketLocation({ namespace: o.namespace, name: 'default', prefix: o.prefix }));
  // What the BackupRepository controller does before the first PVB or DataUpload of the namespace runs.
  await Repository.init({ store: await openRepositoryStore({ location, volumeNamespace: VOLUME_NAMESPACE, kube }), password: o.password, kdf: { N: 1024, r: 8, p: 1 } });
  return { kube, kubeconfig: info.kubeconfigPath, location };
}

/** Undoes setUpMoverNamespace: the namespace (not waited for), the bucket prefix and the local work directory. */
export async function tearDownMoverNamespace(o: { namespace: string; prefix: string; work: string }): Promise<void> {
  await kubectl(['delete', 'namespace', o.namespace, '--wait=false']).catch(() => undefined);
  await deletePrefix(`${o.prefix}/`);
  rmSync(o.work, { recursive: true, force: true });
}

export interface MoverRun {
  done: Promise<{ exitCode: number; stderr: string }>;
  /** The termination message file, as the kubelet would read it. */
  termination: string;
}

/**
 * Starts `cairn <args>` as the data mover's container would, with the flags every mover takes (timeouts, progress
 * cadence, JSON logs, the termination message under `work`), on node local-node-1.
 */
export function startMoverProcess(o: { name: string; work: string; namespace: string; kubeconfig: string; args: readonly string[] }): MoverRun {
  const termination = join(o.work, `${o.name}.termination`);
  const args = [
    RUN_JS, ...o.args,
    '--resource-timeout=1m', '--progress-interval=1s', '--log-level=info', '--log-format=json', `--termination-message-path=${termination}`,
    '-n', o.namespace, '--kubeconfig', o.kubeconfig,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_NAME: 'local-node-1' } });
  const err: Buffer[] = [];
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const done = new Promise<{ exitCode: number; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ exitCode: code ?? 128, stderr: Buffer.concat(err).toString('utf8') }));
  });
  return { done, termination };
}

/**
 * The Events of one object in the order they were recorded: creation timestamps have one-second resolution, the
 * resourceVersion order is the order a watcher sees them in.
 */
export async function eventsInOrder(kube: Kube, namespace: string, name: string): Promise<CoreV1Event[]> {
  const list = await kube.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
  return [...list.items].sort((a, b) => Number(a.metadata?.resourceVersion ?? 0) - Number(b.metadata?.resourceVersion ?? 0));
}

/** A mix a restore must reproduce: text, random bytes across several chunks, a sub-directory, a symlink, modes. */
export function writeSampleVolume(dir: string, o: { greeting: string; randomMiB: number; smallFiles: number }): void {
  mkdirSync(join(dir, 'sub', 'deeper'), { recursive: true });
  writeFileSync(join(dir, 'hello.txt'), `${o.greeting}\n`);
  writeFileSync(join(dir, 'random.bin'), randomFillSync(Buffer.alloc(o.randomMiB << 20)));
  for (let i = 0; i < o.smallFiles; i++) writeFileSync(join(dir, 'sub', `small-${i}.txt`), `file ${i}\n`.repeat(i + 1));
  writeFileSync(join(dir, 'sub', 'deeper', 'script.sh'), '#!/bin/sh\necho hi\n', { mode: 0o750 });
  symlinkSync('../hello.txt', join(dir, 'sub', 'link'));
}

/** Writes `mib` MiB of incompressible data into `dir` in files of `partMiB` (a volume worth canceling). */
export function writeLargeData(dir: string, mib: number, o: { partMiB?: number } = {}): void {
  const partMiB = o.partMiB ?? 8;
  mkdirSync(dir, { recursive: true });
  const chunk = Buffer.alloc(partMiB << 20);
  for (let i = 0; i < Math.ceil(mib / partMiB); i++) writeFileSync(join(dir, `part-${i}.bin`), randomFillSync(chunk));
}

/** Expects `b` to hold what `a` holds: names, modes, bytes, symlink targets, and (with `mtimes`) file times to the ms. */
export function expectSameTree(a: string, b: string, o: { skip?: readonly string[]; mtimes?: boolean } = {}): void {
  const skip = o.skip ?? [];
  const names = readdirSync(a).filter((n) => !skip.includes(n)).sort();
  expect(readdirSync(b).filter((n) => !skip.includes(n)).sort()).toEqual(names);
  for (const n of names) {
    const sa = lstatSync(join(a, n));
    const sb = lstatSync(join(b, n));
    expect(sb.mode, n).toBe(sa.mode);
    if (sa.isDirectory()) expectSameTree(join(a, n), join(b, n), { mtimes: o.mtimes ?? false });
    else if (sa.isSymbolicLink()) expect(readlinkSync(join(b, n))).toBe(readlinkSync(join(a, n)));
    else {
      expect(readFileSync(join(b, n)).equals(readFileSync(join(a, n))), `${n} bytes`).toBe(true);
      if (o.mtimes) expect(Math.floor(sb.mtimeMs)).toBe(Math.floor(sa.mtimeMs));
    }
  }
}
