/**
 * The Backup controller against the local cluster and its MinIO. Most tests run the controller in this process
 * for one namespace (fast, isolated); the last ones go through a real installed server, including a restart of
 * its pod while a backup runs.
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { Kinds, newBackup, newRestore, type Backup, type BackupSpec } from '../../src/api/index.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import { customClient } from '../../src/kube/custom.js';
import type { ServerContext, Stoppable } from '../../src/server/context.js';
import { startBackupController, startBackupControllerWith } from '../../src/server/backup/backup-controller.js';
import { startRestoreController } from '../../src/server/restore/restore-controller.js';
import { clusterInfo, kubeConfig, kubectl, s3Client } from '../support/cluster.js';
import { applyList, deletePrefix, installServer, listKeys, serverRolledOut } from '../support/server-install.js';
import { bucketLocation, credentialsSecret, inProcessContext } from '../support/in-process-server.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';
import { readTarGz } from '../unit/server/backup/tar.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-backup-${RUN}`;
const SERVER_NS = `cairn-backup-srv-${RUN}`;
const APP = `backup-app-${RUN}`;
const OTHER = `backup-other-${RUN}`;
const PREFIX = `backup-it-${RUN}`;
const GROUP = `it${RUN}.example.com`;
const CRD = `widgets.${GROUP}`;
const TERMINAL = ['Completed', 'PartiallyFailed', 'Failed', 'FailedValidation'];

let kube: Kube;
let controller: Stoppable | undefined;
let ctx: ServerContext;

const bucket = () => clusterInfo().s3.bucket;
const backups = () => veleroClients(kube).backups;

async function getObject(key: string): Promise<Buffer> {
  const res = await s3Client().send(new GetObjectCommand({ Bucket: bucket(), Key: key }));
  return Buffer.from(await (res.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
}

async function createBackup(namespace: string, name: string, spec: BackupSpec): Promise<void> {
  await backups().create(newBackup({ namespace, name, spec }));
}

async function finished(namespace: string, name: string, timeoutMs = 60_000): Promise<Backup> {
  // Read without validation: a Backup with a malformed spec must still be seen to fail.
  const lenient = customClient<Backup>(kube, Kinds.Backup, (o) => o as Backup);
  return waitFor(
    async () => {
      const b = await lenient.get(namespace, name);
      return b && TERMINAL.includes(b.status?.phase ?? '') ? b : undefined;
    },
    { timeoutMs, description: `backup ${namespace}/${name} finished` },
  );
}

beforeAll(async () => {
  kube = kubeFromConfig(kubeConfig());
  // A real server (also installs the CRDs the in-process controller needs).
  await installServer({ namespace: SERVER_NS, prefix: `${PREFIX}/server` });

  await kubectl(['create', 'namespace', NS]);
  await kubectl(['create', 'namespace', APP]);
  await kubectl(['create', 'namespace', OTHER]);
  await applyList([
    credentialsSecret(NS),
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: CRD },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    },
  ]);
  await veleroClients(kube).locations.create(bucketLocation({ namespace: NS, name: 'default', prefix: `${PREFIX}/default`, default: true }));
  await waitFor(async () => (await kubectl(['get', 'crd', CRD, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}'])).stdout === 'True', {
    timeoutMs: 30_000,
    description: `CRD ${CRD} established`,
  });

  const labels = { app: 'web' };
  await applyList([
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: APP, labels }, data: { color: 'blue' } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-password', namespace: APP }, stringData: { password: `s3cr3t-${RUN}` } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'web', namespace: APP } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: APP, labels }, spec: { selector: labels, ports: [{ port: 80 }] } },
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: APP }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Mi' } } } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: APP, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'web',
            containers: [{ name: 'web', image: 'busybox', command: ['sleep', '3600'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
            volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
          },
        },
      },
    },
    { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: APP }, spec: { size: 1 } },
    { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w2', namespace: APP }, spec: { size: 2 } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'not-mine', namespace: OTHER } },
  ]);
  // The claim binds once the pod is scheduled (WaitForFirstConsumer).
  await waitFor(async () => (await kubectl(['-n', APP, 'get', 'pvc', 'data', '-o', 'jsonpath={.spec.volumeName}'])).stdout || undefined, {
    timeoutMs: 90_000,
    description: 'PVC data bound',
  });

  ctx = inProcessContext(kube, NS, { component: 'backup-it', level: 'warn' });
  controller = await startBackupController(ctx);
}, 300_000);

afterAll(async () => {
  await controller?.stop();
  await kubectl(['delete', 'namespace', NS, SERVER_NS, APP, OTHER, '--wait=false'], { allowFailure: true });
  await kubectl(['delete', 'crd', CRD, '--wait=false'], { allowFailure: true });
  await deletePrefix(`${PREFIX}/`);
});

describe('backup controller (in process)', () => {
  let backup: Backup;
  const name = `app-${RUN}`;
  const dir = () => `${PREFIX}/default/backups/${name}/`;

  it('backs up a namespace with a Deployment, Service, ConfigMap, Secret, ServiceAccount, CRs and a PVC to Completed', async () => {
    await createBackup(NS, name, { includedNamespaces: [APP], ttl: '24h0m0s' });
    backup = await finished(NS, name);
    expect(backup.status?.phase, JSON.stringify(backup.status)).toBe('Completed');
    const s = backup.status ?? {};
    expect(s.formatVersion).toBe('1.1.0');
    expect(s.version).toBe(1);
    expect(s.errors ?? 0).toBe(0);
    expect(s.progress?.itemsBackedUp).toBeGreaterThan(10);
    expect(s.progress?.totalItems).toBe(s.progress?.itemsBackedUp);
    expect(Date.parse(s.expiration ?? '') - Date.parse(s.startTimestamp ?? '')).toBe(24 * 3600_000);
    expect(Date.parse(s.completionTimestamp ?? '')).toBeGreaterThanOrEqual(Date.parse(s.startTimestamp ?? ''));
    expect(backup.metadata?.labels?.['velero.io/storage-location']).toBe('default');
    expect(backup.spec?.storageLocation).toBe('default');
    expect(backup.metadata?.annotations?.['velero.io/source-cluster-k8s-gitversion']).toMatch(/^v1\./);
  });

  it('writes the backup files with Velero names into the location', async () => {
    const keys = (await listKeys(dir())).map((k) => k.slice(dir().length)).sort();
    expect(keys).toEqual(
      [
        'velero-backup.json',
        `${name}.tar.gz`,
        `${name}-logs.gz`,
        `${name}-results.gz`,
        `${name}-resource-list.json.gz`,
        `${name}-volumeinfo.json.gz`,
        `${name}-itemoperations.json.gz`,
        `${name}-podvolumebackups.json.gz`,
        `${name}-volumesnapshots.json.gz`,
        `${name}-csi-volumesnapshotclasses.json.gz`,
      ].sort(),
    );
    const meta = JSON.parse((await getObject(`${dir()}velero-backup.json`)).toString('utf8')) as Backup;
    expect(meta).toMatchObject({ apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name }, status: { phase: 'Completed' } });
    expect((await getObject(`${dir()}velero-backup.json`)).toString('utf8')).toContain('\n  "apiVersion"');
    const json = async (suffix: string) => JSON.parse(gunzipSync(await getObject(`${dir()}${name}${suffix}`)).toString('utf8')) as unknown;
    expect(await json('-itemoperations.json.gz')).toEqual([]);
    expect(await json('-podvolumebackups.json.gz')).toEqual([]);
    expect(await json('-results.gz')).toEqual({ warnings: expect.any(Object), errors: {} });
    const pv = (await kubectl(['-n', APP, 'get', 'pvc', 'data', '-o', 'jsonpath={.spec.volumeName}'])).stdout;
    expect(await json('-volumeinfo.json.gz')).toEqual([expect.objectContaining({ pvcName: 'data', pvcNamespace: APP, pvName: pv, skipped: true, snapshotDataMoved: false })]);
    const log = gunzipSync(await getObject(`${dir()}${name}-logs.gz`)).toString('utf8');
    expect(log).toContain('Backing up item');
    expect(log).not.toContain(`s3cr3t-${RUN}`);
  });

  it('holds exactly the namespace items and their related cluster items, each also as a preferred-version copy', async () => {
    const entries = await readTarGz(await getObject(`${dir()}${name}.tar.gz`));
    expect(entries[0]).toMatchObject({ name: 'metadata/version', body: '1.1.0\n' });
    const plain = entries.map((e) => e.name).filter((n) => n.startsWith('resources/') && !n.includes('-preferredversion/'));
    const copies = entries.map((e) => e.name).filter((n) => n.includes('-preferredversion/'));
    expect(copies.length).toBe(plain.length);

    const pv = (await kubectl(['-n', APP, 'get', 'pvc', 'data', '-o', 'jsonpath={.spec.volumeName}'])).stdout;
    const mustHave = [
      `resources/namespaces/cluster/${APP}.json`,
      `resources/deployments.apps/namespaces/${APP}/web.json`,
      `resources/services/namespaces/${APP}/web.json`,
      `resources/configmaps/namespaces/${APP}/settings.json`,
      `resources/secrets/namespaces/${APP}/db-password.json`,
      `resources/serviceaccounts/namespaces/${APP}/web.json`,
      `resources/persistentvolumeclaims/namespaces/${APP}/data.json`,
      `resources/persistentvolumes/cluster/${pv}.json`,
      `resources/widgets.${GROUP}/namespaces/${APP}/w1.json`,
      `resources/widgets.${GROUP}/namespaces/${APP}/w2.json`,
      `resources/customresourcedefinitions.apiextensions.k8s.io/cluster/${CRD}.json`,
    ];
    for (const p of mustHave) expect(plain).toContain(p);
    expect(copies).toContain(`resources/deployments.apps/v1-preferredversion/namespaces/${APP}/web.json`);
    // Nothing from other namespaces, no events, and no cluster item other than the namespace, the PV and the CRD.
    const outside = plain.filter((p) => !p.includes(`/namespaces/${APP}/`) && !mustHave.includes(p));
    expect(outside).toEqual([]);
    expect(plain.filter((p) => p.startsWith('resources/events'))).toEqual([]);

    const resourceList = JSON.parse(gunzipSync(await getObject(`${dir()}${name}-resource-list.json.gz`)).toString('utf8')) as Record<string, string[]>;
    expect(Object.values(resourceList).flat().length).toBe(plain.length);
    expect(resourceList['v1/Secret']).toEqual([`${APP}/db-password`]);
    expect(resourceList[`${GROUP}/v1/Widget`]).toEqual([`${APP}/w1`, `${APP}/w2`]);

    const secret = JSON.parse(entries.find((e) => e.name === `resources/secrets/namespaces/${APP}/db-password.json`)?.body ?? '{}') as { data: Record<string, string> };
    expect(Buffer.from(secret.data.password ?? '', 'base64').toString('utf8')).toBe(`s3cr3t-${RUN}`);
  });

  it('is restorable: the restore controller brings the items back into a mapped namespace', async () => {
    const restoreController = await startRestoreController(ctx);
    try {
      const target = `${APP}-copy`;
      const { restores } = veleroClients(kube);
      await restores.create(newRestore({ namespace: NS, name: `r-${RUN}`, spec: { backupName: name, namespaceMapping: { [APP]: target }, includedResources: ['configmaps', 'secrets', 'widgets.' + GROUP, 'serviceaccounts', 'namespaces', 'customresourcedefinitions.apiextensions.k8s.io'] } }));
      const r = await waitFor(
        async () => {
          const cur = await restores.get(NS, `r-${RUN}`);
          return ['Completed', 'PartiallyFailed', 'Failed', 'FailedValidation'].includes(cur?.status?.phase ?? '') ? cur : undefined;
        },
        { timeoutMs: 60_000, description: 'restore finished' },
      );
      expect(r.status?.phase, JSON.stringify(r.status)).toBe('Completed');
      const cm = JSON.parse((await kubectl(['-n', target, 'get', 'configmap', 'settings', '-o', 'json'])).stdout) as { data: Record<string, string> };
      expect(cm.data).toEqual({ color: 'blue' });
      const secret = JSON.parse((await kubectl(['-n', target, 'get', 'secret', 'db-password', '-o', 'json'])).stdout) as { data: Record<string, string> };
      expect(Buffer.from(secret.data.password ?? '', 'base64').toString('utf8')).toBe(`s3cr3t-${RUN}`);
      const w = JSON.parse((await kubectl(['-n', target, 'get', `widgets.${GROUP}`, 'w2', '-o', 'json'])).stdout) as { spec: unknown };
      expect(w.spec).toEqual({ size: 2 });
    } finally {
      await restoreController.stop();
      await kubectl(['delete', 'namespace', `${APP}-copy`, '--wait=false'], { allowFailure: true });
    }
  });

  it('fails validation with every reason: a missing location and inconsistent filters', async () => {
    const bad = `bad-${RUN}`;
    await createBackup(NS, bad, { storageLocation: 'nowhere', includedNamespaces: [APP], excludedNamespaces: [APP] });
    const b = await finished(NS, bad);
    expect(b.status?.phase).toBe('FailedValidation');
    expect(b.status?.validationErrors).toEqual([
      `Invalid included/excluded namespace lists: excludes list cannot contain an item in the includes list: ${APP}`,
      'error getting backup storage location: backupstoragelocations.velero.io "nowhere" not found',
    ]);
    expect(await listKeys(`${PREFIX}/default/backups/${bad}/`)).toEqual([]);
  });

  it('fails validation for an Unavailable location and a malformed TTL', async () => {
    const down = bucketLocation({ namespace: NS, name: 'down', prefix: `${PREFIX}/down`, s3Url: 'http://127.0.0.1:1' });
    await veleroClients(kube).locations.create({ ...down, status: { phase: 'Unavailable', message: 'cannot reach the object store' } });
    await createBackup(NS, `down-${RUN}`, { storageLocation: 'down' });
    const b = await finished(NS, `down-${RUN}`);
    expect(b.status?.phase).toBe('FailedValidation');
    expect(b.status?.validationErrors).toEqual(["backup can't be created because BackupStorageLocation down is in Unavailable status. cannot reach the object store"]);

    await kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name: `ttl-${RUN}`, namespace: NS }, spec: { ttl: 'forever' } }) });
    const t = await finished(NS, `ttl-${RUN}`);
    expect(t.status?.phase).toBe('FailedValidation');
    expect(t.status?.validationErrors?.join('\n')).toContain('ttl');
  });

  it('leaves a backup another live server process runs alone, and takes it over once its heartbeat stops', async () => {
    await controller?.stop();
    controller = await startBackupControllerWith({ ...ctx, claimStaleAfterMs: 4000 });
    const held = `held-${RUN}`;
    const b = newBackup({ namespace: NS, name: held, spec: { includedNamespaces: [APP], storageLocation: 'default' } });
    const beat = new Date();
    b.metadata = { ...b.metadata, annotations: { 'backup.cairn.io/runner': 'old-pod/1', 'backup.cairn.io/heartbeat': beat.toISOString() } };
    await backups().create({ ...b, status: { phase: 'InProgress', startTimestamp: beat.toISOString() } });
    const done = await finished(NS, held);
    expect(done.status?.phase).toBe('Completed');
    // Not before the other runner's heartbeat went stale.
    expect(Date.parse(done.status?.completionTimestamp ?? '')).toBeGreaterThanOrEqual(beat.getTime() + 4000 - 1000);
    expect(done.metadata?.annotations?.['backup.cairn.io/runner']).toBeUndefined();
    await controller.stop();
    controller = await startBackupController(ctx);
  });

  it('gives up with a reason on a backup the server stopped during too many times', async () => {
    const tired = `tired-${RUN}`;
    const b = newBackup({ namespace: NS, name: tired, spec: { includedNamespaces: [APP], storageLocation: 'default' } });
    b.metadata = { ...b.metadata, annotations: { 'backup.cairn.io/attempts': '3' } };
    await backups().create({ ...b, status: { phase: 'InProgress', startTimestamp: new Date().toISOString() } });
    const done = await finished(NS, tired);
    expect(done.status?.phase).toBe('Failed');
    expect(done.status?.failureReason).toBe('the server stopped 3 times while running this backup; giving up');
  });

  it('runs a backup found InProgress at start (a server stopped mid-backup) again to Completed', async () => {
    await controller?.stop();
    controller = undefined;
    const stuck = `stuck-${RUN}`;
    const b = newBackup({ namespace: NS, name: stuck, spec: { includedNamespaces: [APP], storageLocation: 'default' } });
    await backups().create({ ...b, status: { phase: 'InProgress', startTimestamp: new Date().toISOString(), formatVersion: '1.1.0', version: 1 } });
    controller = await startBackupController(ctx);
    const done = await finished(NS, stuck);
    expect(done.status?.phase).toBe('Completed');
    expect(done.metadata?.annotations?.['backup.cairn.io/attempts']).toBeUndefined();
    const log = gunzipSync(await getObject(`${PREFIX}/default/backups/${stuck}/${stuck}-logs.gz`)).toString('utf8');
    expect(log).toContain('running it again from the start');
  });

  it('marks a backup Failed with the reason when the location cannot be written', async () => {
    const info = clusterInfo();
    await veleroClients(kube).locations.create(bucketLocation({ namespace: NS, name: 'no-bucket', bucket: `no-such-bucket-${RUN}` }));
    const broken = `broken-${RUN}`;
    await createBackup(NS, broken, { includedNamespaces: [APP], storageLocation: 'no-bucket' });
    const b = await finished(NS, broken);
    expect(b.status?.phase).toBe('Failed');
    expect(b.status?.failureReason).toMatch(/^cannot upload the backup to storage location no-bucket/);
    expect(b.status?.failureReason).not.toContain(info.s3.secretAccessKey);
    expect(b.status?.completionTimestamp).toBeTruthy();
  });

  it('takes only labelled items with a selector, with what they need', async () => {
    const sel = `sel-${RUN}`;
    await createBackup(NS, sel, { includedNamespaces: [APP], labelSelector: { matchLabels: { app: 'web' } }, includeClusterResources: false });
    const b = await finished(NS, sel);
    expect(b.status?.phase).toBe('Completed');
    const list = JSON.parse(gunzipSync(await getObject(`${PREFIX}/default/backups/${sel}/${sel}-resource-list.json.gz`)).toString('utf8')) as Record<string, string[]>;
    expect(list['v1/ConfigMap']).toEqual([`${APP}/settings`]);
    expect(list['v1/Service']).toEqual([`${APP}/web`]);
    expect(list['apps/v1/Deployment']).toEqual([`${APP}/web`]);
    // The pod (labelled) brings its claim and service account; cluster resources are off, so no PV.
    expect(list['v1/PersistentVolumeClaim']).toEqual([`${APP}/data`]);
    expect(list['v1/ServiceAccount']).toEqual([`${APP}/web`]);
    expect(list['v1/PersistentVolume']).toBeUndefined();
    expect(list['v1/Secret']).toBeUndefined();
  });
});

describe('backup through the installed server', () => {
  it('completes a backup and survives a restart of the server pod mid-backup', async () => {
    await serverRolledOut(SERVER_NS);
    const first = `srv-${RUN}`;
    await createBackup(SERVER_NS, first, { includedNamespaces: [APP] });
    const done = await finished(SERVER_NS, first, 120_000);
    expect(done.status?.phase, JSON.stringify(done.status)).toBe('Completed');
    const keys = await listKeys(`${PREFIX}/server/backups/${first}/`);
    expect(keys).toContain(`${PREFIX}/server/backups/${first}/${first}.tar.gz`);

    // Deterministic: a Backup left InProgress while no server runs is finished by the next server.
    await kubectl(['-n', SERVER_NS, 'scale', 'deployment/cairn', '--replicas=0']);
    await waitFor(async () => (await kubectl(['-n', SERVER_NS, 'get', 'pods', '-l', 'deploy=cairn', '-o', 'name'])).stdout.trim() === '', {
      timeoutMs: 90_000,
      description: 'server pod gone',
    });
    const orphan = `srv-orphan-${RUN}`;
    const ob = newBackup({ namespace: SERVER_NS, name: orphan, spec: { includedNamespaces: [APP], storageLocation: 'default' } });
    await backups().create({ ...ob, status: { phase: 'InProgress', startTimestamp: new Date().toISOString(), formatVersion: '1.1.0', version: 1 } });
    await kubectl(['-n', SERVER_NS, 'scale', 'deployment/cairn', '--replicas=1']);
    const resumed = await finished(SERVER_NS, orphan, 150_000);
    expect(resumed.status?.phase).toBe('Completed');
    const log = gunzipSync(await getObject(`${PREFIX}/server/backups/${orphan}/${orphan}-logs.gz`)).toString('utf8');
    expect(log).toContain('running it again from the start');

    // Racy by nature: the pod is deleted while a whole-cluster backup runs (or just after): never stuck.
    const second = `srv-restart-${RUN}`;
    await createBackup(SERVER_NS, second, {});
    await waitFor(async () => ((await backups().get(SERVER_NS, second))?.status?.phase ? true : undefined), { timeoutMs: 60_000, description: 'backup started' });
    await kubectl(['-n', SERVER_NS, 'delete', 'pod', '-l', 'deploy=cairn', '--wait=false']);
    const after = await finished(SERVER_NS, second, 150_000);
    expect(['Completed', 'PartiallyFailed', 'Failed']).toContain(after.status?.phase);
    if (after.status?.phase === 'Failed') expect(after.status.failureReason).toBeTruthy();
  }, 300_000);
});
