/**
 * For tests of the server's side of fs-backup and data movement in which the test plays the node agent: an installed
 * server with stand-in node agents, a real snapshot in a namespace's repository as the node agent would have made it,
 * and a backup deleted through a DeleteBackupRequest as `cairn backup delete` asks for it.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newDeleteBackupRequest, type DeleteBackupRequest } from '../../src/api/index.js';
import { backup as dataPathBackup } from '../../src/datapath/uploader.js';
import type { Kube } from '../../src/kube/client.js';
import { openRepositoryForVolume } from '../../src/storage/volume-repository.js';
import { installServer, standInNodeAgents } from './server-install.js';
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
