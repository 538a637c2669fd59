/**
 * Storage-location validation, backup sync, TTL expiry, DeleteBackupRequests and DownloadRequests against the local
 * cluster and its MinIO. The five controllers run in this process for one namespace (fast and isolated from other
 * parts of the server); the download path through the API server's pod proxy uses a real installed server.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { newBackup, newBackupStorageLocation, newDownloadRequest, newRestore, type Backup, type BackupStorageLocation, type PodVolumeBackup } from '../../src/api/index.js';
import { createLogger } from '../../src/base/logger.js';
import { CANCEL_REQUESTED_ANNOTATION } from '../../src/api/cancel.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import type { Stoppable } from '../../src/server/context.js';
import { startBackupStorageLocationController } from '../../src/server/backup-storage-location-controller.js';
import { startBackupSyncController } from '../../src/server/backup-sync-controller.js';
import { deleteRequestFor, startGcController } from '../../src/server/gc-controller.js';
import { startDeleteBackupRequestController } from '../../src/server/delete-backup-request-controller.js';
import { startDownloadRequestController } from '../../src/server/download-request-controller.js';
import { fetchDownload, type ServerTransport } from '../../src/server/download/client.js';
import { Repository } from '../../src/datapath/repository.js';
import { backup as backupDirectory } from '../../src/datapath/uploader.js';
import { openRepositoryStore } from '../../src/storage/repository-store.js';
import { clusterInfo, kubeConfig, kubectl, s3Client } from '../support/cluster.js';
import { deletePrefix, installServer, listKeys, serverRolledOut } from '../support/server-install.js';
import { bucketLocation, credentialsSecret, inProcessContext, stopControllers } from '../support/in-process-server.js';
import { tempRoots } from '../support/temp-roots.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-storage-${RUN}`;
const SERVER_NS = `cairn-storage-srv-${RUN}`;
const PREFIX = `storage-it-${RUN}`;

let kube: Kube;
const running: Stoppable[] = [];
const tempDir = tempRoots('cairn-storage-it-');

const bucket = () => clusterInfo().s3.bucket;
const clients = () => veleroClients(kube);

function credentialsFile(accessKeyId: string, secret: string): string {
  return `[default]\naws_access_key_id = ${accessKeyId}\naws_secret_access_key = ${secret}\n`;
}

async function putObject(key: string, body: string | Buffer): Promise<void> {
  await s3Client().send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: body }));
}

function location(name: string, opts: { prefix?: string; bucket?: string; secret?: string; s3Url?: string; syncPeriod?: string; extraConfig?: Record<string, string> } = {}): BackupStorageLocation {
  const { syncPeriod, ...rest } = opts;
  return bucketLocation({ namespace: NS, name, prefix: `${PREFIX}/${name}`, ...rest, backupSyncPeriod: syncPeriod ?? '0s', validationFrequency: '1m' });
}

/** A Backup as Velero stores it in velero-backup.json (from "another cluster": other namespace, uid, location). */
function storedBackup(name: string, status: Backup['status']): Backup {
  const b = newBackup({ namespace: 'velero', name, spec: { storageLocation: 'their-location', includedNamespaces: ['app'], ttl: '720h0m0s' } });
  return { ...b, metadata: { ...b.metadata, uid: 'uid-from-elsewhere', resourceVersion: '123' }, ...(status ? { status } : {}) };
}

/** A finished Backup object in NS whose files are in `loc`'s prefix: velero-backup.json and the log. */
async function backupWithFiles(name: string, loc: string, opts: { expiration?: string; phase?: 'Completed' | 'InProgress' } = {}): Promise<Backup> {
  const status: Backup['status'] = { phase: opts.phase ?? 'Completed', ...(opts.expiration ? { expiration: opts.expiration } : {}) };
  const created = await clients().backups.create({ ...newBackup({ namespace: NS, name, spec: { storageLocation: loc } }), status });
  await putObject(`${PREFIX}/${loc}/backups/${name}/velero-backup.json`, JSON.stringify(created, null, 2));
  await putObject(`${PREFIX}/${loc}/backups/${name}/${name}-logs.gz`, gzipSync(`log of ${name}\n`));
  return created;
}

async function phaseOf(name: string): Promise<{ phase?: string; message?: string }> {
  const l = await clients().locations.get(NS, name);
  return { ...(l?.status?.phase ? { phase: l.status.phase } : {}), ...(l?.status?.message ? { message: l.status.message } : {}) };
}

beforeAll(async () => {
  kube = kubeFromConfig(kubeConfig());
  // A real server for the pod-proxy download path; the install also brings the CRDs the in-process controllers need.
  await installServer({ namespace: SERVER_NS, prefix: `${PREFIX}/server`, locationConfig: 'publicUrl=http://127.0.0.1:9' });

  await kubectl(['create', 'namespace', NS]);
  await kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [credentialsSecret(NS), credentialsSecret(NS, 'wrong-creds', credentialsFile('NOSUCHKEY', 'definitely-wrong-secret'))],
    }),
  });
  const ctx = inProcessContext(kube, NS, { component: 'storage-it', config: { storeValidationFrequencyMs: 60_000, backupSyncPeriodMs: 60_000, gcFrequencyMs: 30_000 } });
  for (const start of [startBackupStorageLocationController, startBackupSyncController, startGcController, startDeleteBackupRequestController, startDownloadRequestController]) {
    running.push(await start(ctx));
  }
}, 300_000);

afterAll(async () => {
  await stopControllers(running);
  await kubectl(['delete', 'namespace', NS, SERVER_NS, '--wait=false'], { allowFailure: true });
  await deletePrefix(PREFIX);
});

describe('storage location validation', () => {
  it('marks a usable location Available and broken ones Unavailable with the reason', async () => {
    const { locations } = clients();
    await locations.create(location('good'));
    await locations.create(location('no-bucket', { bucket: `no-such-bucket-${RUN}` }));
    await locations.create(location('wrong-creds', { secret: 'wrong-creds' }));
    await locations.create(location('unreachable', { s3Url: 'http://127.0.0.1:1' }));
    await putObject(`${PREFIX}/junk/photos/cat.jpg`, 'not a backup');
    await locations.create(location('junk'));

    const settled = async (name: string) => waitFor(async () => ((await phaseOf(name)).phase ? phaseOf(name) : undefined), { timeoutMs: 45_000, description: `location ${name} validated` });
    expect(await settled('good')).toEqual({ phase: 'Available' });
    expect(await settled('no-bucket')).toEqual({ phase: 'Unavailable', message: `bucket "no-such-bucket-${RUN}" at ${clusterInfo().s3.endpoint} does not exist` });
    const denied = await settled('wrong-creds');
    expect(denied.phase).toBe('Unavailable');
    expect(denied.message).toMatch(/denied \(check the location's credentials\)/);
    expect(denied.message).not.toContain('definitely-wrong-secret');
    expect((await settled('unreachable')).message).toMatch(/^cannot reach the object store for bucket .* at http:\/\/127\.0\.0\.1:1/);
    expect((await settled('junk')).message).toContain('"photos/"');

    const events = await kubectl(['-n', NS, 'get', 'events', '--field-selector', 'involvedObject.name=no-bucket', '-o', 'jsonpath={.items[*].reason}']);
    expect(events.stdout).toContain('LocationUnavailable');
  });

  it('revalidates at once when the location is fixed', async () => {
    await clients().locations.patch(NS, 'wrong-creds', { spec: { credential: { name: 'creds', key: 'cloud' } } });
    await waitFor(async () => (await phaseOf('wrong-creds')).phase === 'Available', { timeoutMs: 30_000, description: 'fixed location Available' });
    expect(await phaseOf('wrong-creds')).toEqual({ phase: 'Available' });
  });
});

describe('backup sync', () => {
  it('creates Backups (and their PodVolumeBackups) for backups found in storage, and removes orphans', async () => {
    const { locations, backups, podVolumeBackups: pvbs } = clients();
    const base = `${PREFIX}/synced/backups`;
    const finished = { phase: 'Completed' as const, completionTimestamp: '2026-01-01T00:00:00Z', expiration: '2099-01-01T00:00:00Z' };
    await putObject(`${base}/hand-made/velero-backup.json`, JSON.stringify(storedBackup('hand-made', finished), null, 2));
    const pvb = {
      apiVersion: 'velero.io/v1',
      kind: 'PodVolumeBackup',
      metadata: { name: 'hand-made-x1', namespace: 'velero', uid: 'old-pvb', labels: { 'velero.io/backup-name': 'hand-made', 'velero.io/backup-uid': 'uid-from-elsewhere' } },
      spec: { backupStorageLocation: 'their-location', node: 'n1', pod: { kind: 'Pod', namespace: 'app', name: 'web-0' }, repoIdentifier: '', volume: 'data' },
      status: { phase: 'Completed', snapshotID: 'abc123' },
    };
    await putObject(`${base}/hand-made/hand-made-podvolumebackups.json.gz`, gzipSync(JSON.stringify([pvb])));
    await putObject(`${base}/still-running/velero-backup.json`, JSON.stringify(storedBackup('still-running', { phase: 'Finalizing', expiration: '2099-01-01T00:00:00Z' })));
    await putObject(`${base}/no-metadata/no-metadata.tar.gz`, 'x');
    await locations.create(location('synced', { syncPeriod: '1s' }));

    const synced = await waitFor(() => backups.get(NS, 'hand-made'), { timeoutMs: 45_000, description: 'Backup hand-made synced from storage' });
    expect(synced.metadata.labels?.['velero.io/storage-location']).toBe('synced');
    expect(synced.spec).toMatchObject({ storageLocation: 'synced', includedNamespaces: ['app'] });
    expect(synced.status?.phase).toBe('Completed');
    expect(synced.metadata.uid).not.toBe('uid-from-elsewhere');

    const restoredPvb = await waitFor(() => pvbs.get(NS, 'hand-made-x1'), { timeoutMs: 20_000, description: 'PodVolumeBackup recreated' });
    expect(restoredPvb.metadata.labels?.['velero.io/backup-uid']).toBe(synced.metadata.uid);
    expect(restoredPvb.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Backup', name: 'hand-made', uid: synced.metadata.uid });
    expect(restoredPvb.spec.backupStorageLocation).toBe('synced');
    expect(restoredPvb.status?.snapshotID).toBe('abc123');

    const loc = await waitFor(async () => (await locations.get(NS, 'synced'))?.status?.lastSyncedTime, { timeoutMs: 20_000, description: 'lastSyncedTime set' });
    expect(Date.parse(loc)).toBeGreaterThan(0);
    expect(await backups.get(NS, 'still-running')).toBeUndefined();
    expect(await backups.get(NS, 'no-metadata')).toBeUndefined();

    await deletePrefix(`${base}/hand-made/`);
    await waitFor(async () => (await backups.get(NS, 'hand-made')) === undefined, { timeoutMs: 30_000, description: 'orphaned Backup hand-made deleted' });
  });
});

describe('backup sync of a backup whose files vanished', () => {
  it('forgets its pod-volume snapshots in the repository before removing the Backup; other backups keep theirs', async () => {
    const { locations, backups, podVolumeBackups: pvbs } = clients();
    const password = `repo-pw-${RUN}`;
    await kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'velero-repo-credentials', namespace: NS }, stringData: { 'repository-password': password } }),
    });
    // Sync starts once every Backup, file and PVB is in place (a Backup whose files are not written yet is an orphan).
    const loc = await locations.create(location('forget', { syncPeriod: '0s' }));
    const repository = await Repository.init({ store: await openRepositoryStore({ location: loc, volumeNamespace: 'app', kube }), password, kdf: { N: 1024, r: 8, p: 1 } });
    const snapshotOf = async (content: string) => {
      const dir = tempDir('cairn-forget-');
      writeFileSync(join(dir, 'f.txt'), content);
      return (await backupDirectory({ source: dir, repository })).snapshotId;
    };
    const goneSnapshot = await snapshotOf(`gone ${RUN}`);
    const keptSnapshot = await snapshotOf(`kept ${RUN}`);

    const finished = { phase: 'Completed' as const, completionTimestamp: '2025-01-01T00:00:00Z', expiration: '2099-01-01T00:00:00Z' };
    const withPvb = async (name: string, snapshotID: string) => {
      const backup = await backups.create({ ...newBackup({ namespace: NS, name, spec: { storageLocation: 'forget' } }), status: finished });
      await putObject(`${PREFIX}/forget/backups/${name}/velero-backup.json`, JSON.stringify(backup, null, 2));
      const pvb = {
        apiVersion: 'velero.io/v1',
        kind: 'PodVolumeBackup',
        metadata: { name: `${name}-x1`, namespace: NS, labels: { 'velero.io/backup-name': name, 'velero.io/backup-uid': backup.metadata.uid ?? '' } },
        spec: { backupStorageLocation: 'forget', node: 'n1', pod: { kind: 'Pod', namespace: 'app', name: 'web-0' }, repoIdentifier: '', volume: 'data', uploaderType: 'kopia' },
      };
      await pvbs.create(pvb as PodVolumeBackup);
      await pvbs.updateStatus(NS, pvb.metadata.name, (p) => {
        p.status = { phase: 'Completed', snapshotID };
      });
    };
    await withPvb(`forget-gone-${RUN}`, goneSnapshot);
    await withPvb(`forget-kept-${RUN}`, keptSnapshot);

    await locations.patch(NS, 'forget', { spec: { backupSyncPeriod: '1s' } });
    // Velero (or anyone) deletes one backup's files from the bucket.
    await deletePrefix(`${PREFIX}/forget/backups/forget-gone-${RUN}/`);
    await waitFor(async () => (await backups.get(NS, `forget-gone-${RUN}`)) === undefined, { timeoutMs: 45_000, description: 'orphaned Backup deleted by the sync' });

    const reopened = await Repository.open({ store: await openRepositoryStore({ location: loc, volumeNamespace: 'app', kube }), password });
    const ids = (await reopened.snapshots.list()).map((s) => s.id);
    expect(ids).toContain(keptSnapshot);
    expect(ids).not.toContain(goneSnapshot);
    expect(await pvbs.get(NS, `forget-gone-${RUN}-x1`)).toBeUndefined();
    expect((await pvbs.get(NS, `forget-kept-${RUN}-x1`))?.status?.snapshotID).toBe(keptSnapshot);
    expect(await backups.get(NS, `forget-kept-${RUN}`)).toBeDefined();
  });
});

describe('TTL expiry and DeleteBackupRequests', () => {
  beforeAll(async () => {
    await clients().locations.create(location('store'));
    await waitFor(async () => (await phaseOf('store')).phase === 'Available', { timeoutMs: 30_000, description: 'location store Available' });
  });

  it('deletes a backup whose TTL passed from the cluster and from storage', async () => {
    const { backups, deleteRequests: dbrs } = clients();
    const backup = await backupWithFiles('short-ttl', 'store', { expiration: new Date(Date.now() + 5_000).toISOString() });
    expect(await listKeys(`${PREFIX}/store/backups/short-ttl/`)).toHaveLength(2);
    await waitFor(async () => (await backups.get(NS, 'short-ttl')) === undefined, { timeoutMs: 40_000, description: 'expired backup deleted' });
    expect(await listKeys(`${PREFIX}/store/backups/short-ttl/`)).toEqual([]);
    // The request is marked Processed just after the Backup is deleted.
    const requests = await waitFor(
      async () => {
        const list = await dbrs.list(NS, `velero.io/backup-uid=${backup.metadata.uid}`);
        return list.length === 1 && list[0]!.status?.phase === 'Processed' ? list : undefined;
      },
      { timeoutMs: 20_000, description: 'the DeleteBackupRequest Processed' },
    );
    expect(requests[0]!.status).toEqual({ phase: 'Processed' });
    expect(requests[0]!.metadata.labels?.['velero.io/backup-name']).toBe('short-ttl');
  });

  it('removes storage objects, restores made from the backup, then the Backup', async () => {
    const { backups, restores, deleteRequests: dbrs } = clients();
    const backup = await backupWithFiles('to-delete', 'store');
    await restores.create({ ...newRestore({ namespace: NS, name: 'to-delete-r1', spec: { backupName: 'to-delete' } }), status: { phase: 'Completed' } });
    await putObject(`${PREFIX}/store/restores/to-delete-r1/restore-to-delete-r1-logs.gz`, gzipSync('restore log\n'));
    const request = await dbrs.create(deleteRequestFor(backup, NS));
    const done = await waitFor(async () => {
      const r = await dbrs.get(NS, request.metadata.name ?? '');
      return r?.status?.phase === 'Processed' ? r : undefined;
    }, { timeoutMs: 30_000, description: 'DeleteBackupRequest processed' });
    expect(done.status?.errors ?? []).toEqual([]);
    expect(await backups.get(NS, 'to-delete')).toBeUndefined();
    expect(await restores.get(NS, 'to-delete-r1')).toBeUndefined();
    expect(await listKeys(`${PREFIX}/store/backups/to-delete/`)).toEqual([]);
    expect(await listKeys(`${PREFIX}/store/restores/to-delete-r1/`)).toEqual([]);
  });

  it('finishes a deletion a server restart interrupted (request left InProgress)', async () => {
    const { backups, deleteRequests: dbrs } = clients();
    const backup = await backupWithFiles('interrupted', 'store');
    const request = deleteRequestFor(backup, NS);
    const created = await dbrs.create({ ...request, status: { phase: 'InProgress' } });
    await waitFor(async () => (await dbrs.get(NS, created.metadata.name ?? ''))?.status?.phase === 'Processed', { timeoutMs: 30_000, description: 'interrupted request processed' });
    expect(await backups.get(NS, 'interrupted')).toBeUndefined();
    expect(await listKeys(`${PREFIX}/store/backups/interrupted/`)).toEqual([]);
  });

  it('does not expire backups of a read-only location and labels why', async () => {
    const { locations, backups, deleteRequests: dbrs } = clients();
    await locations.create({ ...location('read-only'), spec: { ...location('read-only').spec, accessMode: 'ReadOnly' } });
    await waitFor(async () => (await phaseOf('read-only')).phase === 'Available', { timeoutMs: 30_000, description: 'location read-only Available' });
    await backupWithFiles('kept-ro', 'read-only', { expiration: new Date(Date.now() - 1_000).toISOString() });
    const labelled = await waitFor(async () => (await backups.get(NS, 'kept-ro'))?.metadata.labels?.['velero.io/gc-failure'], { timeoutMs: 20_000, description: 'gc-failure label' });
    expect(labelled).toBe('BSLReadOnly');
    expect(await dbrs.list(NS, 'velero.io/backup-name=kept-ro')).toEqual([]);
    expect(await listKeys(`${PREFIX}/read-only/backups/kept-ro/`)).toHaveLength(2);
  });

  it('cancels a backup still in progress before deleting it: the request waits, the backup and its files stay', async () => {
    const { backups, deleteRequests: dbrs } = clients();
    const backup = await backupWithFiles('busy', 'store', { phase: 'InProgress' });
    const request = await dbrs.create(deleteRequestFor(backup, NS));
    // No backup or cancel controller runs here: the request asks for the cancel and waits for the backup to end.
    await waitFor(async () => ((await backups.get(NS, 'busy'))?.metadata.annotations?.[CANCEL_REQUESTED_ANNOTATION] ? true : undefined), {
      timeoutMs: 30_000,
      description: 'cancel asked on the running backup',
    });
    expect((await dbrs.get(NS, request.metadata.name ?? ''))?.status?.phase ?? 'New').not.toBe('Processed');
    expect((await backups.get(NS, 'busy'))?.status?.phase).toBe('InProgress');
    expect(await listKeys(`${PREFIX}/store/backups/busy/`)).toHaveLength(2);
    await dbrs.delete(NS, request.metadata.name ?? '');
  });
});

describe('DownloadRequests', () => {
  beforeAll(async () => {
    await clients().locations.create(location('downloads'));
    await waitFor(async () => (await phaseOf('downloads')).phase === 'Available', { timeoutMs: 30_000, description: 'location downloads Available' });
    await backupWithFiles('dl', 'downloads');
  });

  it('gives a pre-signed URL whose content is the stored file, and no URL for a missing file', async () => {
    const { downloadRequests: downloads } = clients();
    const processed = async (kind: 'BackupLog' | 'BackupResults') => {
      const r = await downloads.create(newDownloadRequest({ namespace: NS, name: `dl-${kind.toLowerCase()}-${RUN}`, spec: { target: { kind, name: 'dl' } } }));
      return waitFor(async () => {
        const cur = await downloads.get(NS, r.metadata.name ?? '');
        return cur?.status?.phase === 'Processed' ? cur : undefined;
      }, { timeoutMs: 20_000, description: `DownloadRequest ${kind} processed` });
    };
    const log = await processed('BackupLog');
    expect(log.status?.downloadURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/.*dl-logs\.gz\?.*X-Amz-Signature=/);
    const expiresIn = Date.parse(log.status?.expiration ?? '') - Date.now();
    expect(expiresIn).toBeGreaterThan(8 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(10 * 60_000);
    const res = await fetch(log.status?.downloadURL ?? '');
    expect(res.status).toBe(200);
    expect(gunzipSync(Buffer.from(await res.arrayBuffer())).toString('utf8')).toBe('log of dl\n');

    const missing = await processed('BackupResults');
    expect(missing.status?.downloadURL).toBeUndefined();
  });

  it('fetchDownload reads the file through the signed URL, and says when it does not exist', async () => {
    const text = await fetchDownload(kube, { namespace: NS, kind: 'BackupLog', name: 'dl', gunzip: true, timeoutMs: 30_000 });
    expect(text.toString('utf8')).toBe('log of dl\n');
    await expect(fetchDownload(kube, { namespace: NS, kind: 'BackupResults', name: 'dl', timeoutMs: 30_000 })).rejects.toThrow('BackupResults of dl not found in storage');
  });

  it('deletes requests whose URL expired', async () => {
    const { downloadRequests: downloads } = clients();
    const r = newDownloadRequest({ namespace: NS, name: `old-${RUN}`, spec: { target: { kind: 'BackupLog', name: 'dl' } } });
    await downloads.create({ ...r, status: { phase: 'Processed', downloadURL: 'http://example.invalid/x', expiration: new Date(Date.now() - 1_000).toISOString() } });
    await waitFor(async () => (await downloads.get(NS, `old-${RUN}`)) === undefined, { timeoutMs: 20_000, description: 'expired DownloadRequest deleted' });
  });

  it('gives a file:// URL for a filesystem location, which fetchDownload reads when no server pod can stream it', async () => {
    const root = tempDir('cairn-storage-fs-');
    const fsLocation = newBackupStorageLocation({ namespace: NS, name: 'files', spec: { provider: 'filesystem', objectStorage: { bucket: 'bkt' }, config: { root }, backupSyncPeriod: '0s' } });
    await clients().locations.create(fsLocation);
    await clients().backups.create({ ...newBackup({ namespace: NS, name: 'fsb', spec: { storageLocation: 'files' } }), status: { phase: 'Completed' } });
    mkdirSync(join(root, 'bkt', 'backups', 'fsb'), { recursive: true });
    writeFileSync(join(root, 'bkt', 'backups', 'fsb', 'fsb-logs.gz'), gzipSync('filesystem log\n'));
    const text = await fetchDownload(kube, { namespace: NS, kind: 'BackupLog', name: 'fsb', gunzip: true, timeoutMs: 30_000 });
    expect(text.toString('utf8')).toBe('filesystem log\n');
    const requests = await clients().downloadRequests.list(NS);
    expect(requests.find((r) => r.spec.target.name === 'fsb')?.status?.downloadURL).toBe(`file://${root}/bkt/backups/fsb/fsb-logs.gz`);
  });

  it('fetchDownload streams through the server pod when the signed URL is unusable', async () => {
    await serverRolledOut(SERVER_NS);
    // The installed server validated its own location (the same controller, running in the pod).
    const serverLocation = await waitFor(async () => {
      const l = await clients().locations.get(SERVER_NS, 'default');
      return l?.status?.phase ? l : undefined;
    }, { timeoutMs: 60_000, description: 'server location default validated' });
    expect(serverLocation.status?.phase).toBe('Available');
    const name = 'via-proxy';
    // Files first, then the Backup: a Backup whose directory is missing would be removed by the server's sync.
    const content = randomBytes(200_000);
    await putObject(`${PREFIX}/server/backups/${name}/${name}-results.gz`, gzipSync(content));
    const b = newBackup({ namespace: SERVER_NS, name, spec: { storageLocation: 'default' } });
    await clients().backups.create({ ...b, status: { phase: 'Completed' } });

    const debug: string[] = [];
    const logger = createLogger({ level: 'debug', bindings: {} });
    const spy = new Proxy(logger, {
      get: (target, prop, receiver) => (prop === 'debug' ? (obj: object, msg: string) => debug.push(`${msg} ${JSON.stringify(obj)}`) : Reflect.get(target, prop, receiver)),
    });
    // The test bed gives pods loopback addresses, which the API server refuses to proxy to ("address not allowed");
    // this transport does the proxy's hop itself: a GET on the pod's address and port, as the API server would.
    const seen: string[] = [];
    const direct: ServerTransport = async (r) => {
      seen.push(`${r.pod}:${r.port}${r.path}`);
      const ip = (await kubectl(['-n', r.namespace, 'get', 'pod', r.pod, '-o', 'jsonpath={.status.podIP}'])).stdout.trim();
      const res = await fetch(`http://${ip}:${r.port}${r.path}`);
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
      return Buffer.from(await res.arrayBuffer());
    };
    const body = await fetchDownload(kube, { namespace: SERVER_NS, kind: 'BackupResults', name, gunzip: true, timeoutMs: 60_000, logger: spy, serverTransport: direct });
    expect(body.equals(content)).toBe(true);
    expect(debug.join('\n')).toContain('streaming through the cluster');
    expect(seen).toEqual([expect.stringMatching(new RegExp(`^cairn-[a-z0-9]+-[a-z0-9]+:${await serverPort()}/download/via-proxy-[0-9a-f-]{36}$`))]);

    // The endpoint serves only DownloadRequests that exist in the server's namespace.
    const pod = seen[0]!.split(':')[0]!;
    const bogus = await direct({ namespace: SERVER_NS, pod, port: Number(await serverPort()), path: '/download/no-such-request', timeoutMs: 10_000 }).catch((err: Error) => err.message);
    expect(bogus).toBe('HTTP 404: no such download request\n');
  });
});

async function serverPort(): Promise<string> {
  const r = await kubectl(['-n', SERVER_NS, 'get', 'deployment', 'cairn', '-o', 'jsonpath={.spec.template.spec.containers[0].ports[0].containerPort}']);
  return r.stdout.trim();
}
