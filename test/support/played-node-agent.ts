/**
 * For tests of the server's side of fs-backup and data movement in which the test plays the node agent: an installed
 * server with stand-in node agents, a real snapshot in a namespace's repository as the node agent would have made it,
 * a backup whose stored volume info says what such a backup would have written, backups and restores waited for,
 * and a backup deleted through a DeleteBackupRequest as `cairn backup delete` asks for it.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { newDeleteBackupRequest, type Backup, type DeleteBackupRequest, type Restore } from '../../src/api/index.js';
import { backup as dataPathBackup } from '../../src/datapath/uploader.js';
import type { Kube } from '../../src/kube/client.js';
import { openRepositoryForVolume } from '../../src/storage/volume-repository.js';
import { expect } from 'vitest';
import { clusterInfo, kubectl, s3Client } from './cluster.js';
import { BACKUP_ENDED, backupInPhase, getJsonGz, installServer, standInNodeAgents } from './server-install.js';
import { veleroClients } from './velero-clients.js';
import { waitFor } from './wait.js';

/**
 * Installs the server into `namespace` with stand-in node agents on `nodes`. The test opens the namespace's
 * repositories the way the server does: with the location's credentials file.
 */
export async function installServerWithStandInAgents(o: { namespace: string; prefix: string; nodes: readonly string[] }): Promise<void> {
  const { credentials } = await installServer({ namespace: o.namespace, prefix: o.prefix });
  process.env.AWS_SHARED_CREDENTIALS_FILE = credentials;
  await standInNodeAgents(o.namespace, o.nodes);
}

export interface RepositoryRef {
  kube: Kube;
  /** The install namespace. */
  namespace: string;
  /** The namespace whose volumes the repository holds. */
  volumeNamespace: string;
}

/** Makes a real snapshot of a small tree (`dir/file.txt` holding `content`) in the volume namespace's repository. */
export async function snapshotInRepository(ref: RepositoryRef, o: { content: string; tags: Record<string, string>; tempPrefix: string }): Promise<string> {
  const src = mkdtempSync(join(tmpdir(), o.tempPrefix));
  mkdirSync(join(src, 'dir'));
  writeFileSync(join(src, 'dir', 'file.txt'), o.content);
  const { repository } = await openRepositoryForVolume({ kube: ref.kube, namespace: ref.namespace, bslName: 'default', volumeNamespace: ref.volumeNamespace });
  return (await dataPathBackup({ source: src, repository, tags: o.tags })).snapshotId;
}

/** The IDs of the snapshots in the volume namespace's repository. */
export async function snapshotIDs(ref: RepositoryRef): Promise<string[]> {
  const { repository } = await openRepositoryForVolume({ kube: ref.kube, namespace: ref.namespace, bslName: 'default', volumeNamespace: ref.volumeNamespace });
  return (await repository.snapshots.list()).map((s) => s.id);
}

/**
 * Expects the backup controller to be free while backup `waiting` waits for its volumes: backup `other`, which
 * `startOther` creates and which has no volumes, completes meanwhile and `waiting` still waits.
 */
export async function expectOtherBackupCompletes(kube: Kube, namespace: string, o: { waiting: string; other: string; startOther: () => Promise<void> }): Promise<void> {
  await o.startOther();
  const otherDone = await backupInPhase(kube, namespace, o.other, BACKUP_ENDED);
  expect(otherDone.status?.phase).toBe('Completed');
  expect(otherDone.status?.backupItemOperationsAttempted).toBeUndefined();
  expect((await veleroClients(kube).backups.get(namespace, o.waiting))?.status?.phase).toBe('WaitingForPluginOperations');
}

/** Waits until the installed server found its location `default` Available. */
export async function installedLocationAvailable(namespace: string): Promise<void> {
  await waitFor(async () => (await kubectl(['-n', namespace, 'get', 'backupstoragelocation', 'default', '-o', 'jsonpath={.status.phase}'])).stdout === 'Available', {
    timeoutMs: 120_000,
    description: 'location Available',
  });
}

/** Creates `backup` and waits until the server completed it. */
export async function completedBackup(kube: Kube, backup: Backup): Promise<void> {
  const { backups } = veleroClients(kube);
  const namespace = backup.metadata.namespace ?? '';
  const name = backup.metadata.name ?? '';
  await backups.create(backup);
  await waitFor(async () => (await backups.get(namespace, name))?.status?.phase === 'Completed', { timeoutMs: 120_000, description: 'backup Completed' });
}

/**
 * Rewrites the volume info the server stored for backup `backup` under `prefix`, as another kind of backup (one whose
 * volumes fs-backup or a data mover took) would have written it.
 */
export async function rewriteVolumeInfo<T>(prefix: string, backup: string, rewrite: (infos: T[]) => unknown[]): Promise<void> {
  const key = `${prefix}/backups/${backup}/${backup}-volumeinfo.json.gz`;
  const patched = rewrite(await getJsonGz<T[]>(key));
  await s3Client().send(new PutObjectCommand({ Bucket: clusterInfo().s3.bucket, Key: key, Body: gzipSync(JSON.stringify(patched)) }));
}

/** Waits until restore `name` of `namespace` is in one of `phases`; returns it. */
export function restoreInPhase(kube: Kube, namespace: string, name: string, phases: readonly string[], timeoutMs = 120_000): Promise<Restore> {
  const { restores } = veleroClients(kube);
  return waitFor(
    async () => {
      const r = await restores.get(namespace, name);
      return r && phases.includes(r.status?.phase ?? '') ? r : undefined;
    },
    { timeoutMs, description: `restore ${name} in ${phases.join('|')}` },
  );
}

/** Asks for backup `name` to be deleted with a DeleteBackupRequest `<name>-delete`; returns the request once Processed. */
export async function deleteBackupByRequest(kube: Kube, namespace: string, name: string): Promise<DeleteBackupRequest> {
  const requests = veleroClients(kube).deleteRequests;
  await requests.create(newDeleteBackupRequest({ namespace, name: `${name}-delete`, spec: { backupName: name } }));
  return waitFor(
    async () => {
      const r = await requests.get(namespace, `${name}-delete`);
      return r?.status?.phase === 'Processed' ? r : undefined;
    },
    { timeoutMs: 90_000, description: `delete request of ${name} processed` },
  );
}
