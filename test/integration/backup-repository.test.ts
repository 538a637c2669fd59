/**
 * BackupRepositories against the local cluster and its MinIO: the controller (with the storage-location controller)
 * runs in this process for one namespace; one check goes through an installed server.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { BackupStorageLocation } from '../../src/api/index.js';
import { MetricsRegistry } from '../../src/base/metrics.js';
import { SERVER_METRICS, ServerMetric } from '../../src/server/metrics/definitions.js';
import { Repository } from '../../src/datapath/repository.js';
import { backup } from '../../src/datapath/uploader.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import type { Stoppable } from '../../src/server/context.js';
import { startBackupStorageLocationController } from '../../src/server/backup-storage-location-controller.js';
import { startBackupRepositoryController } from '../../src/server/backup-repository-controller.js';
import { ensureRepository, RepositoryNotReadyError } from '../../src/server/repository/ensure.js';
import { openRepositoryStore } from '../../src/storage/repository-store.js';
import { cairn } from '../support/cli.js';
import { clusterInfo, kubeConfig, kubectl, s3Client } from '../support/cluster.js';
import { deletePrefix, installServer, listKeys } from '../support/server-install.js';
import { bucketLocation, credentialsSecret, inProcessContext, stopControllers } from '../support/in-process-server.js';
import { tempRoots } from '../support/temp-roots.js';
import { veleroClients } from '../support/velero-clients.js';
import { createVeleroKopiaRepository } from '../../tools/peers/velero-kopia.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-repo-${RUN}`;
const SERVER_NS = `cairn-repo-srv-${RUN}`;
const PREFIX = `repo-it-${RUN}`;
const APP = `app-${RUN}`;

let kube: Kube;
let kubeconfig: string;
const running: Stoppable[] = [];
const logLines: string[] = [];
/** The server's metrics as the controllers under test feed them. */
const metrics = new MetricsRegistry(SERVER_METRICS);
const tempDir = tempRoots('cairn-repo-it-');

const bucket = () => clusterInfo().s3.bucket;
const repos = () => veleroClients(kube).repositories;
const locations = () => veleroClients(kube).locations;

function location(name: string, opts: { bucket?: string } = {}): BackupStorageLocation {
  return bucketLocation({ namespace: NS, name, prefix: `${PREFIX}/${name}`, ...opts, validationFrequency: '1m' });
}

async function repositoryPassword(namespace: string): Promise<string> {
  const secret = await kube.core.readNamespacedSecret({ name: 'velero-repo-credentials', namespace });
  return Buffer.from(secret.data?.['repository-password'] ?? '', 'base64').toString('utf8');
}

beforeAll(async () => {
  const info = clusterInfo();
  kubeconfig = info.kubeconfigPath;
  kube = kubeFromConfig(kubeConfig());
  // A real server for the last check (the install also brings the CRDs the in-process controllers need).
  await installServer({ namespace: SERVER_NS, prefix: `${PREFIX}/server` });

  await kubectl(['create', 'namespace', NS]);
  await kubectl(['apply', '-f', '-'], {
    input: JSON.stringify(credentialsSecret(NS)),
  });
  const destination = new PassThrough();
  destination.on('data', (chunk: Buffer) => logLines.push(chunk.toString()));
  const ctx = inProcessContext(kube, NS, { component: 'repo-it', level: 'debug', log: { format: 'json', destination }, metrics });
  running.push(await startBackupStorageLocationController(ctx));
  // Grace period 0: this test's maintenance may drop what no snapshot references at once.
  running.push(await startBackupRepositoryController(ctx, { maintenanceGracePeriodMs: 0 }));
}, 300_000);

afterAll(async () => {
  await stopControllers(running);
  await kubectl(['delete', 'namespace', NS, SERVER_NS, '--wait=false'], { allowFailure: true });
  await deletePrefix(PREFIX);
});

describe('ensureRepository and the BackupRepository controller', () => {
  it('creates a Ready repository with its objects under <prefix>/kopia/<namespace>/, and reuses it', async () => {
    await locations().create(location('good'));
    const first = await ensureRepository({ kube, namespace: NS, bsl: 'good', volumeNamespace: APP, timeoutMs: 60_000 });
    expect(first.created).toBe(true);
    const repo = first.repository;
    expect(repo.metadata.name).toBe(`${APP}-good-kopia`);
    expect(repo.metadata.labels).toMatchObject({ 'velero.io/storage-location': 'good', 'velero.io/volume-namespace': APP, 'velero.io/repository-type': 'kopia' });
    expect(repo.spec).toMatchObject({ volumeNamespace: APP, backupStorageLocation: 'good', repositoryType: 'kopia', maintenanceFrequency: '1h0m0s' });
    expect(repo.status?.phase).toBe('Ready');
    expect(repo.status?.lastMaintenanceTime).toBeTruthy();

    const keys = await listKeys(`${PREFIX}/good/kopia/${APP}/`);
    expect(keys).toContain(`${PREFIX}/good/kopia/${APP}/config`);
    expect(keys.some((k) => k.startsWith(`${PREFIX}/good/kopia/${APP}/keys/`))).toBe(true);

    const second = await ensureRepository({ kube, namespace: NS, bsl: 'good', volumeNamespace: APP, timeoutMs: 60_000 });
    expect(second.created).toBe(false);
    expect(second.repository.metadata.uid).toBe(repo.metadata.uid);
    expect(await repos().list(NS, `velero.io/volume-namespace=${APP}`)).toHaveLength(1);
  });

  it('keeps a random repository password in velero-repo-credentials and never shows it', async () => {
    const password = await repositoryPassword(NS);
    expect(password.length).toBeGreaterThanOrEqual(32);
    expect(password).not.toBe('static-passw0rd');
    const events = await kubectl(['-n', NS, 'get', 'events', '-o', 'json']);
    expect(events.stdout).toContain('RepositoryReady');
    expect(events.stdout).not.toContain(password);
    expect(logLines.join('')).toContain('initialised backup repository');
    expect(logLines.join('')).not.toContain(password);
  });

  it('runs maintenance every maintenanceFrequency and records it, keeping what snapshots reference', async () => {
    // A snapshot in the repository, written with the data path the way a pod-volume backup will.
    const source = tempDir('cairn-repo-it-src-');
    mkdirSync(join(source, 'sub'));
    writeFileSync(join(source, 'sub', 'data.bin'), randomBytes(300_000));
    const loc = (await locations().get(NS, 'good'))!;
    const store = await openRepositoryStore({ location: loc, volumeNamespace: APP, kube });
    const password = await repositoryPassword(NS);
    const { snapshotId } = await backup({ source, repository: await Repository.open({ store, password }) });

    const name = `${APP}-good-kopia`;
    const before = (await repos().get(NS, name))!.status?.lastMaintenanceTime;
    await repos().patch(NS, name, { spec: { maintenanceFrequency: '2s' } });
    const maintained = await waitFor(
      async () => {
        const r = await repos().get(NS, name);
        return r?.status?.recentMaintenance?.length ? r : undefined;
      },
      { timeoutMs: 60_000, description: 'a maintenance run recorded' },
    );
    const run = maintained.status!.recentMaintenance![0]!;
    expect(run.result).toBe('Succeeded');
    expect(run.message).toMatch(/^1 snapshots;/);
    expect(Date.parse(run.completeTimestamp!)).toBeGreaterThanOrEqual(Date.parse(run.startTimestamp!));
    expect(maintained.status!.lastMaintenanceTime).not.toBe(before);
    // The metrics count the run and hold the repository's size in the bucket (the 300 kB of random data at least).
    const repository = { repository: name };
    // Counted once the run is recorded in the status, so read after it.
    await waitFor(async () => (((await metrics.value(ServerMetric.RepositoryMaintenanceSuccessTotal, repository)) ?? 0) >= 1 ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the maintenance run counted',
    });
    expect(await metrics.value(ServerMetric.RepositoryMaintenanceFailureTotal, repository)).toBeUndefined();
    expect(await metrics.value(ServerMetric.RepositorySizeBytes, repository)).toBeGreaterThan(300_000);
    expect(await metrics.text()).toMatch(new RegExp(`^cairn_repository_maintenance_duration_seconds_count\\{repository="${name}"\\} [1-9]`, 'm'));
    // The snapshot still opens after maintenance.
    const after = await Repository.open({ store, password });
    await after.loadIndex();
    expect((await after.snapshots.list()).map((s) => s.id)).toContain(snapshotId);
    // Runs go on every period; the history keeps the last three.
    await waitFor(async () => ((await repos().get(NS, name))?.status?.recentMaintenance?.length ?? 0) >= 2, { timeoutMs: 60_000, description: 'a second maintenance run' });
    await repos().patch(NS, name, { spec: { maintenanceFrequency: '1h0m0s' } });
  });

  it('marks a repository in a location with a bad bucket NotReady with the reason', async () => {
    await locations().create(location('bad', { bucket: `no-such-bucket-${RUN}` }));
    const err = await ensureRepository({ kube, namespace: NS, bsl: 'bad', volumeNamespace: APP, timeoutMs: 60_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RepositoryNotReadyError);
    const repo = await waitFor(
      async () => {
        const r = await repos().get(NS, `${APP}-bad-kopia`);
        return r?.status?.message?.includes('is unavailable') ? r : undefined;
      },
      { timeoutMs: 60_000, description: 'repository NotReady because its location is unavailable' },
    );
    expect(repo.status?.phase).toBe('NotReady');
    expect(repo.status?.message).toBe(`backup storage location "bad" is unavailable: bucket "no-such-bucket-${RUN}" at ${clusterInfo().s3.endpoint} does not exist`);
  });

  it('a Velero kopia repository (made by Velero\'s kopia) is Ready for restores and never written: no maintenance', async () => {
    const velero = `velero-app-${RUN}`;
    const dir = `${PREFIX}/good/kopia/${velero}/`;
    const { s3 } = clusterInfo();
    const kopiaRepo = await createVeleroKopiaRepository({ kind: 's3', bucket: s3.bucket, prefix: dir, endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, region: s3.region });
    const src = tempDir('velero-src-');
    writeFileSync(join(src, 'f.txt'), 'kept by Velero\n');
    await kopiaRepo.snapshot(src);
    const before = await listKeys(dir);
    // The Secret holds cairn's random password; the repository has Velero's default, which is tried too.
    const { repository } = await ensureRepository({ kube, namespace: NS, bsl: 'good', volumeNamespace: velero, timeoutMs: 60_000, maintenanceFrequencyMs: 2_000 });
    expect(repository.status?.phase).toBe('Ready');
    expect(repository.status?.message).toBe("Velero kopia repository: cairn restores from it and never writes to it (no maintenance, no new backups); it opens with Velero's default password");
    // Maintenance is due every 2 seconds for a cairn repository; this one is never maintained nor written.
    await waitFor(async () => ((await repos().get(NS, repository.metadata.name ?? ''))?.status?.lastMaintenanceTime ? true : undefined), { timeoutMs: 30_000, description: 'first connection recorded' });
    const later = await waitFor(
      async () => {
        const r = await repos().get(NS, repository.metadata.name ?? '');
        // Long enough for two maintenance periods of a cairn repository to pass.
        return r && Date.now() - Date.parse(r.status?.lastMaintenanceTime ?? '') > 6_000 ? r : undefined;
      },
      { timeoutMs: 30_000, description: 'several maintenance periods passed' },
    );
    expect(later.status?.recentMaintenance ?? []).toEqual([]);
    expect(await listKeys(dir)).toEqual(before);
  });

  it('a kopia.repository that is not a kopia repository makes the repository NotReady, untouched', async () => {
    const junk = `junk-app-${RUN}`;
    const dir = `${PREFIX}/good/kopia/${junk}/`;
    await s3Client().send(new PutObjectCommand({ Bucket: bucket(), Key: `${dir}kopia.repository`, Body: '{}' }));
    const err = await ensureRepository({ kube, namespace: NS, bsl: 'good', volumeNamespace: junk, timeoutMs: 60_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RepositoryNotReadyError);
    expect((err as Error).message).toContain('kopia.repository has no unique ID');
    expect(await listKeys(dir)).toEqual([`${dir}kopia.repository`]);
  });

  it('marks a repository NotReady when its location is deleted', async () => {
    await locations().create(location('gone'));
    await ensureRepository({ kube, namespace: NS, bsl: 'gone', volumeNamespace: APP, timeoutMs: 60_000 });
    await locations().delete(NS, 'gone');
    const repo = await waitFor(
      async () => {
        const r = await repos().get(NS, `${APP}-gone-kopia`);
        return r?.status?.phase === 'NotReady' ? r : undefined;
      },
      { timeoutMs: 30_000, description: 'repository NotReady after its location was deleted' },
    );
    expect(repo.status?.message).toBe('backup storage location "gone" not found');
  });

  it('repo get lists repositories as a table and as JSON', async () => {
    const table = await cairn(['repo', 'get', '-n', NS], { kubeconfig });
    expect(table.exitCode, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+STATUS\s+LAST MAINTENANCE$/);
    expect(lines.find((l) => l.startsWith(`${APP}-good-kopia `))).toMatch(/\sReady\s+\d{4}-\d\d-\d\dT/);
    expect(lines.find((l) => l.startsWith(`${APP}-bad-kopia `))).toMatch(/\sNotReady\s+<never>$/);

    const one = await cairn(['repo', 'get', `${APP}-good-kopia`, '-n', NS, '-o', 'json'], { kubeconfig });
    expect(one.exitCode, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ kind: 'BackupRepository', metadata: { name: `${APP}-good-kopia` }, status: { phase: 'Ready' } });

    const missing = await cairn(['repo', 'get', 'nope', '-n', NS], { kubeconfig });
    expect(missing.exitCode).toBe(4);
    expect(missing.stderr).toContain('backup repository "nope" not found');
  });

  it('an installed server makes repositories Ready and creates the password Secret', async () => {
    const { repository } = await ensureRepository({ kube, namespace: SERVER_NS, bsl: 'default', volumeNamespace: APP, timeoutMs: 180_000 });
    expect(repository.status?.phase).toBe('Ready');
    expect(await listKeys(`${PREFIX}/server/kopia/${APP}/config`)).toHaveLength(1);
    const password = await repositoryPassword(SERVER_NS);
    expect(password).not.toBe(await repositoryPassword(NS));
    const logs = await kubectl(['-n', SERVER_NS, 'logs', 'deploy/cairn']);
    expect(logs.stdout + logs.stderr).not.toContain(password);
  }, 240_000);
});
