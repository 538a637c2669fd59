/**
 * The Restore controller against the local cluster and MinIO. A backup is written to MinIO the way the backup
 * controller writes it (tarball with paths.ts, velero-backup.json, volume info) and its Backup CR created Completed;
 * the controller runs in this process. The namespace (and the CRD and PV) are deleted, restored, and every object
 * must equal the original minus what the server sets.
 */
import { randomBytes } from 'node:crypto';
import { createGzip } from 'node:zlib';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack } from 'tar-stream';
import { BackupPhase, RestorePhase, newBackup, newRestore, type Backup, type Restore } from '../../src/api/index.js';
import { kubeFromConfig } from '../../src/kube/client.js';
import { FORMAT_VERSION, FORMAT_VERSION_PATH, groupResource, itemPath } from '../../src/server/archive/paths.js';
import { startRestoreController } from '../../src/server/restore/restore-controller.js';
import { startBackupController } from '../../src/server/backup/backup-controller.js';
import { BackupStore } from '../../src/storage/backup-store.js';
import { gunzipText } from '../../src/storage/encoding.js';
import { openLocationStore } from '../../src/storage/location-store.js';
import { kubeConfig, kubectl } from '../support/cluster.js';
import { bucketLocation, credentialsSecret, inProcessContext } from '../support/in-process-server.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const INSTALL_NS = `cairn-rt-${RUN}`;
const APP = `rt-app-${RUN}`;
const COPY = `rt-copy-${RUN}`;
const RESUME = `rt-resume-${RUN}`;
const ROUND = `rt-round-${RUN}`;
const GROUP = `rt${RUN}.cairn.test`;
const CRD_NAME = `widgets.${GROUP}`;
const PV_NAME = `rt-pv-${RUN}`;
const BACKUP = 'app-backup';
const SC = `rt-immediate-${RUN}`;

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; [k: string]: unknown }; [k: string]: unknown };

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD_NAME },
  spec: {
    group: GROUP,
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};

const appObjects: Obj[] = [
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: APP, labels: { app: 'web' } }, data: { mode: 'fast', level: '3' } },
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: APP }, type: 'Opaque', data: { password: Buffer.from('not-a-real-secret').toString('base64') } },
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'worker', namespace: APP } },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: APP },
    spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: APP, annotations: { note: 'kept' } },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { serviceAccountName: 'worker', containers: [{ name: 'web', image: 'example/web:1' }] } },
    },
  },
  { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: APP }, spec: { size: 3, colour: 'blue', nested: { list: [1, 2] } } },
  {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'static', namespace: APP },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } }, storageClassName: '', volumeName: PV_NAME },
  },
  {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'dyn', namespace: APP },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } }, storageClassName: SC },
  },
];

/** Provisions at once (no consumer pod needed), deletes volumes when their claim goes. */
const storageClass = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: SC },
  provisioner: 'cairn.local/local-path',
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'Immediate',
};

const pv: Obj = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: PV_NAME },
  spec: {
    capacity: { storage: '1Mi' },
    accessModes: ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: 'Retain',
    storageClassName: '',
    hostPath: { path: `/tmp/cairn-rt-${RUN}` },
    claimRef: { namespace: APP, name: 'static' },
  },
};

const resourceOf: Record<string, string> = {
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  ServiceAccount: 'serviceaccounts',
  Service: 'services',
  Deployment: 'deployments.apps',
  Widget: groupResource('widgets', GROUP),
  PersistentVolumeClaim: 'persistentvolumeclaims',
  PersistentVolume: 'persistentvolumes',
  Namespace: 'namespaces',
  CustomResourceDefinition: 'customresourcedefinitions.apiextensions.k8s.io',
};

async function apply(obj: object): Promise<void> {
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
}

async function getJson(kind: string, name: string, ns?: string): Promise<Obj | undefined> {
  const r = await kubectl(['get', kind, name, ...(ns ? ['-n', ns] : []), '-o', 'json'], { allowFailure: true });
  return r.exitCode === 0 ? (JSON.parse(r.stdout) as Obj) : undefined;
}

/** What a user compares: the object without what the API server sets or the restore adds. */
function comparable(o: Obj): Obj {
  const c = structuredClone(o);
  const md = c.metadata as Record<string, unknown> & { labels?: Record<string, string>; annotations?: Record<string, string> };
  for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'generation', 'selfLink', 'ownerReferences', 'namespace']) delete md[k];
  if (md.labels) {
    delete md.labels['velero.io/backup-name'];
    delete md.labels['velero.io/restore-name'];
    delete md.labels['kubernetes.io/metadata.name'];
    if (Object.keys(md.labels).length === 0) delete md.labels;
  }
  if (md.annotations) {
    for (const k of ['kubectl.kubernetes.io/last-applied-configuration', 'pv.kubernetes.io/bind-completed', 'pv.kubernetes.io/bound-by-controller', 'deployment.kubernetes.io/revision']) delete md.annotations[k];
    if (Object.keys(md.annotations).length === 0) delete md.annotations;
  }
  delete c.status;
  const spec = c.spec as Record<string, unknown> | undefined;
  if (c.kind === 'Service' && spec) {
    delete spec.clusterIP;
    delete spec.clusterIPs;
  }
  if (c.kind === 'PersistentVolume' && spec?.claimRef) {
    const claimRef = spec.claimRef as Record<string, unknown>;
    delete claimRef.uid;
    delete claimRef.resourceVersion;
    delete claimRef.namespace;
  }
  return c;
}

async function tarball(items: Obj[]): Promise<Buffer> {
  const tar = pack();
  const gz = tar.pipe(createGzip());
  const done = buffer(gz);
  tar.entry({ name: FORMAT_VERSION_PATH, mode: 0o755 }, `${FORMAT_VERSION}\n`);
  for (const o of items) {
    const gr = resourceOf[o.kind] as string;
    const version = o.apiVersion.split('/').pop() as string;
    const body = JSON.stringify(o);
    const ns = o.metadata.namespace;
    tar.entry({ name: itemPath({ groupResource: gr, ...(ns ? { namespace: ns } : {}), name: o.metadata.name }), mode: 0o755 }, body);
    tar.entry({ name: itemPath({ groupResource: gr, ...(ns ? { namespace: ns } : {}), name: o.metadata.name, preferredVersion: version }), mode: 0o755 }, body);
  }
  tar.finalize();
  return done;
}

describe('restore controller against the local cluster and MinIO', () => {
  const kube = kubeFromConfig(kubeConfig());
  const { restores, backups, locations } = veleroClients(kube);
  let store: BackupStore;
  let stop: (() => Promise<void>) | undefined;
  let stopBackups: (() => Promise<void>) | undefined;
  const originals = new Map<string, Obj>();
  let dynPvName = '';
  const key = (o: { kind: string; metadata: { name: string } }) => `${o.kind}/${o.metadata.name}`;

  async function runRestore(name: string, spec: Restore['spec']): Promise<Restore> {
    await restores.create(newRestore({ namespace: INSTALL_NS, name, spec }));
    return waitFor(
      async () => {
        const r = await restores.get(INSTALL_NS, name);
        const phase = r?.status?.phase;
        return phase && phase !== RestorePhase.New && phase !== RestorePhase.InProgress ? r : undefined;
      },
      { timeoutMs: 120_000, description: `restore ${name} to finish` },
    );
  }

  beforeAll(async () => {
    // Every cairn CRD (the backup controller also watches DataUploads): this file may be the first on a fresh cluster.
    const missingCrds = await kubectl(['get', 'crd', 'restores.velero.io', 'backups.velero.io', 'backupstoragelocations.velero.io', 'datauploads.velero.io', 'datadownloads.velero.io'], { allowFailure: true });
    if (missingCrds.exitCode !== 0) await kubectl(['apply', '-R', '-f', 'config/crd']);
    await kubectl(['create', 'namespace', INSTALL_NS]);
    await kubectl(['create', 'namespace', APP]);
    await kubectl(['label', 'namespace', APP, 'team=blue']);
    await apply(credentialsSecret(INSTALL_NS, 'cloud-credentials'));
    const createdBsl = await locations.create(bucketLocation({ namespace: INSTALL_NS, name: 'default', prefix: `restore-it-${RUN}`, secret: 'cloud-credentials', default: true }));
    store = new BackupStore(await openLocationStore({ location: createdBsl, kube }));

    await apply(crd);
    await kubectl(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=60s']);
    await apply(pv);
    await apply(storageClass);
    for (const o of appObjects) await apply(o);
    for (const claim of ['static', 'dyn']) {
      await waitFor(async () => ((await getJson('pvc', claim, APP))?.status as { phase?: string } | undefined)?.phase === 'Bound', {
        timeoutMs: 60_000,
        description: `claim ${claim} Bound`,
      });
    }
    dynPvName = ((await getJson('pvc', 'dyn', APP))?.spec as { volumeName: string }).volumeName;

    // The backup: what the backup controller would have read from the API server.
    const items: Obj[] = [];
    const nsObj = (await getJson('namespace', APP)) as Obj;
    const crdObj = (await getJson('crd', CRD_NAME)) as Obj;
    const pvObj = (await getJson('pv', PV_NAME)) as Obj;
    items.push(nsObj, crdObj, pvObj);
    for (const o of appObjects) items.push((await getJson(resourceOf[o.kind] as string, o.metadata.name, APP)) as Obj);
    for (const o of items) originals.set(key(o), o);
    // The dynamically provisioned volume is in the backup but is not expected back (a new one is provisioned).
    items.push((await getJson('pv', dynPvName)) as Obj);
    const backup = newBackup({ namespace: INSTALL_NS, name: BACKUP, spec: { includedNamespaces: [APP], storageLocation: 'default' } });
    await store.putBackup({
      name: BACKUP,
      metadata: { ...backup, status: { phase: BackupPhase.Completed, formatVersion: FORMAT_VERSION } } as Backup,
      contents: await tarball(items),
      log: 'backup log\n',
      files: {
        volumeInfo: [
          { pvName: PV_NAME, pvcName: 'static', pvcNamespace: APP, snapshotDataMoved: false, preserveLocalSnapshot: false, skipped: true, pvInfo: { reclaimPolicy: 'Retain', labels: null } },
          { pvName: dynPvName, pvcName: 'dyn', pvcNamespace: APP, snapshotDataMoved: false, preserveLocalSnapshot: false, skipped: true, pvInfo: { reclaimPolicy: 'Delete', labels: null } },
        ],
      },
    });
    await backups.create({ ...backup, status: { phase: BackupPhase.Completed, formatVersion: FORMAT_VERSION } } as Backup);

    const ctx = inProcessContext(kube, INSTALL_NS, { level: 'warn', config: { resourceTimeoutMs: 60_000 } });
    const ctrl = await startRestoreController(ctx);
    stop = () => ctrl.stop();
    const backupCtrl = await startBackupController(ctx);
    stopBackups = () => backupCtrl.stop();
  });

  afterAll(async () => {
    await stop?.();
    await stopBackups?.();
    // Restores carry a finalizer the controller removes; drop it here so the namespace can go.
    const list = await restores.list(INSTALL_NS).catch(() => []);
    for (const r of list) await kubectl(['-n', INSTALL_NS, 'patch', 'restore', r.metadata.name ?? '', '--type=merge', '-p', '{"metadata":{"finalizers":null}}'], { allowFailure: true });
    await kubectl(['delete', 'namespace', INSTALL_NS, APP, COPY, RESUME, ROUND, '--ignore-not-found', '--wait=false'], { allowFailure: true });
    await kubectl(['delete', 'pv', PV_NAME, '--ignore-not-found', '--wait=false'], { allowFailure: true });
    await kubectl(['delete', 'crd', CRD_NAME, '--ignore-not-found', '--wait=false'], { allowFailure: true });
    await kubectl(['delete', 'storageclass', SC, '--ignore-not-found', '--wait=false'], { allowFailure: true });
  });

  it('restores a deleted namespace, its CRD and its retained PV so that every object equals the original', async () => {
    await kubectl(['delete', 'namespace', APP, '--wait=true', '--timeout=120s']);
    await waitFor(async () => (await getJson('pv', dynPvName)) === undefined, { timeoutMs: 60_000, description: `released volume ${dynPvName} deleted by its provisioner` });
    await kubectl(['delete', 'pv', PV_NAME, '--wait=true', '--timeout=60s']);
    await kubectl(['delete', 'crd', CRD_NAME, '--wait=true', '--timeout=60s']);

    const r = await runRestore('full', { backupName: BACKUP });
    expect(r.status).toMatchObject({ phase: RestorePhase.Completed, errors: 0, progress: { totalItems: 12, itemsRestored: 12 } });
    expect(r.status?.startTimestamp).toBeTruthy();
    expect(r.status?.completionTimestamp).toBeTruthy();

    for (const orig of originals.values()) {
      const ns = orig.metadata.namespace;
      const now = await getJson(resourceOf[orig.kind] as string, orig.metadata.name, ns);
      expect(now, `${key(orig)} restored`).toBeDefined();
      if (key(orig) === 'PersistentVolumeClaim/dyn') {
        // Restored unbound, so a new volume is provisioned for it: everything but the volume name is the same.
        const withoutVolume = (o: Obj) => ({ ...comparable(o), spec: { ...(o.spec as object), volumeName: undefined } });
        expect(withoutVolume(now as Obj)).toEqual(withoutVolume(orig));
      } else {
        expect(comparable(now as Obj), key(orig)).toEqual(comparable(orig));
      }
      expect((now?.metadata.labels as Record<string, string>)['velero.io/restore-name']).toBe('full');
      expect((now?.metadata.labels as Record<string, string>)['velero.io/backup-name']).toBe(BACKUP);
    }
    // The retained volume was restored as it was, so the claim binds to it again.
    const staticClaim = await waitFor(async () => {
      const c = await getJson('pvc', 'static', APP);
      return (c?.status as { phase?: string } | undefined)?.phase === 'Bound' ? c : undefined;
    }, { timeoutMs: 60_000, description: 'restored claim static Bound to the restored volume' });
    expect((staticClaim.spec as { volumeName: string }).volumeName).toBe(PV_NAME);
    // The deleted dynamic volume was not restored; its claim got a new one.
    const dynClaim = await waitFor(async () => {
      const c = await getJson('pvc', 'dyn', APP);
      return (c?.status as { phase?: string } | undefined)?.phase === 'Bound' ? c : undefined;
    }, { timeoutMs: 60_000, description: 'restored claim dyn Bound to a newly provisioned volume' });
    expect((dynClaim.spec as { volumeName: string }).volumeName).not.toBe(dynPvName);
    expect(await getJson('pv', dynPvName)).toBeUndefined();

    const resourceList = (await store.getRestoreJson('full', 'resourceList')) as Record<string, string[]>;
    expect(resourceList['v1/ConfigMap']).toEqual([`${APP}/settings(created)`]);
    expect(resourceList['v1/Namespace']).toEqual([`${APP}(created)`]);
    expect(resourceList[`${GROUP}/v1/Widget`]).toEqual([`${APP}/w1(created)`]);
    expect(resourceList['v1/PersistentVolume']).toEqual([`${dynPvName}(skipped)`, `${PV_NAME}(created)`].sort());
    expect(await store.getRestoreJson('full', 'results')).toEqual({ warnings: {}, errors: {} });
    expect(await store.getRestoreJson('full', 'itemOperations')).toEqual([]);
    expect(await store.getRestoreJson('full', 'volumeInfo')).toEqual([]);
    const log = gunzipText((await store.objects.get(`restores/full/restore-full-logs.gz`)) as Buffer);
    expect(log).toContain("Restoring resource 'customresourcedefinitions.apiextensions.k8s.io'");
    expect(log).not.toContain('not-a-real-secret');
    expect(log).not.toContain(Buffer.from('not-a-real-secret').toString('base64'));
  });

  it('restores into a mapped namespace', async () => {
    const r = await runRestore('mapped', { backupName: BACKUP, namespaceMapping: { [APP]: COPY }, excludedResources: ['persistentvolumeclaims', 'persistentvolumes'] });
    expect(r.status).toMatchObject({ phase: RestorePhase.Completed, errors: 0 });
    const ns = await getJson('namespace', COPY);
    expect((ns?.metadata.labels as Record<string, string>).team).toBe('blue');
    for (const orig of originals.values()) {
      if (orig.metadata.namespace !== APP || orig.kind === 'PersistentVolumeClaim') continue;
      const now = await getJson(resourceOf[orig.kind] as string, orig.metadata.name, COPY);
      expect(now?.metadata.namespace, key(orig)).toBe(COPY);
      expect(comparable(now as Obj), key(orig)).toEqual(comparable(orig));
    }
    expect(await getJson('pvc', 'static', COPY)).toBeUndefined();
    const resourceList = (await store.getRestoreJson('mapped', 'resourceList')) as Record<string, string[]>;
    expect(resourceList['v1/ConfigMap']).toEqual([`${COPY}/settings(created)`]);
    // The CRD exists (restored above) and is the same as in the backup: left alone.
    expect(resourceList['apiextensions.k8s.io/v1/CustomResourceDefinition']).toEqual([`${CRD_NAME}(skipped)`]);
  });

  it('leaves a changed object alone with existingResourcePolicy none, and puts it back with update', async () => {
    await kubectl(['-n', APP, 'patch', 'configmap', 'settings', '--type=merge', '-p', '{"data":{"mode":"slow","extra":"x"}}']);

    const none = await runRestore('policy-none', { backupName: BACKUP, includedResources: ['configmaps'], existingResourcePolicy: 'none' });
    expect(none.status).toMatchObject({ phase: RestorePhase.Completed, warnings: 1, errors: 0 });
    expect((await getJson('configmap', 'settings', APP))?.data).toEqual({ mode: 'slow', level: '3', extra: 'x' });
    const results = (await store.getRestoreJson('policy-none', 'results')) as { warnings: { namespaces: Record<string, string[]> } };
    expect(results.warnings.namespaces[APP]).toEqual([
      'could not restore, ConfigMap "settings" already exists. Warning: the in-cluster version is different than the backed-up version',
    ]);

    const update = await runRestore('policy-update', { backupName: BACKUP, includedResources: ['configmaps'], existingResourcePolicy: 'update' });
    expect(update.status).toMatchObject({ phase: RestorePhase.Completed, warnings: 0, errors: 0 });
    const cm = await getJson('configmap', 'settings', APP);
    expect(cm?.data).toEqual({ mode: 'fast', level: '3' });
    expect((cm?.metadata.labels as Record<string, string>)['velero.io/restore-name']).toBe('policy-update');
    const resourceList = (await store.getRestoreJson('policy-update', 'resourceList')) as Record<string, string[]>;
    expect(resourceList).toEqual({ 'v1/ConfigMap': [`${APP}/settings(updated)`] });
  });

  it('fails validation for a backup that does not exist, listing every reason', async () => {
    const r = await runRestore('no-backup', { backupName: 'nope', existingResourcePolicy: 'sometimes' });
    expect(r.status?.phase).toBe(RestorePhase.FailedValidation);
    expect(r.status?.validationErrors).toEqual(['Invalid ExistingResourcePolicy: sometimes', 'backup "nope" does not exist']);
  });

  it('runs again a restore a server restart left InProgress, recognising what the first run created', async () => {
    // As the first run would have left it: the namespace and one object already restored, the Restore InProgress.
    await kubectl(['create', 'namespace', RESUME]);
    const cm = appObjects[0] as Obj;
    await apply({ ...cm, metadata: { ...cm.metadata, namespace: RESUME, labels: { app: 'web', 'velero.io/backup-name': BACKUP, 'velero.io/restore-name': 'resumed' } } });
    const spec = { backupName: BACKUP, includedResources: ['configmaps', 'secrets'], namespaceMapping: { [APP]: RESUME } };
    await restores.create({ ...newRestore({ namespace: INSTALL_NS, name: 'resumed', spec }), status: { phase: RestorePhase.InProgress, startTimestamp: '2026-01-01T00:00:00Z' } });
    const r = await waitFor(
      async () => {
        const got = await restores.get(INSTALL_NS, 'resumed');
        return got?.status?.phase === RestorePhase.Completed ? got : undefined;
      },
      { timeoutMs: 60_000, description: 'resumed restore Completed' },
    );
    expect(r.status).toMatchObject({ warnings: 0, errors: 0, progress: { totalItems: 2, itemsRestored: 2 } });
    // The attempt counter only lives while the restore runs.
    expect(r.metadata.annotations?.['restore.cairn.io/attempts']).toBeUndefined();
    expect(await store.getRestoreJson('resumed', 'resourceList')).toEqual({ 'v1/ConfigMap': [`${RESUME}/settings(created)`], 'v1/Secret': [`${RESUME}/creds(created)`] });
    expect((await getJson('secret', 'creds', RESUME))?.data).toEqual((originals.get('Secret/creds') as Obj).data);
  });

  it('fails a restore that server restarts interrupted too often, with the reason', async () => {
    const restore = newRestore({ namespace: INSTALL_NS, name: 'interrupted', annotations: { 'restore.cairn.io/attempts': '3' }, spec: { backupName: BACKUP } });
    await restores.create({ ...restore, status: { phase: RestorePhase.InProgress } });
    const r = await waitFor(
      async () => {
        const got = await restores.get(INSTALL_NS, 'interrupted');
        return got?.status?.phase === RestorePhase.Failed ? got : undefined;
      },
      { timeoutMs: 60_000, description: 'interrupted restore Failed' },
    );
    expect(r.status?.failureReason).toBe('the restore was interrupted by 3 server restarts; giving up');
    expect(r.status?.completionTimestamp).toBeTruthy();
  });

  it('restores what the backup controller backed up: every object equals the original', async () => {
    await kubectl(['create', 'namespace', ROUND]);
    const mine = appObjects
      .filter((o) => o.metadata.name !== 'static')
      .map((o) => ({ ...o, metadata: { ...o.metadata, namespace: ROUND } }) as Obj);
    for (const o of mine) await apply(o);
    const tokenSecret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'worker-token', namespace: ROUND, annotations: { 'kubernetes.io/service-account.name': 'worker' } },
      type: 'kubernetes.io/service-account-token',
    };
    await apply(tokenSecret);
    await apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'runner', namespace: ROUND },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'runner' } },
        template: { metadata: { labels: { app: 'runner' } }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'busybox', command: ['sleep', '3600'] }] } },
      },
    });
    const runningPod = await waitFor(async () => {
      const pods = JSON.parse((await kubectl(['-n', ROUND, 'get', 'pods', '-l', 'app=runner', '-o', 'json'])).stdout) as { items: Obj[] };
      return pods.items.find((p) => (p.status as { phase?: string }).phase === 'Running');
    }, { timeoutMs: 90_000, description: 'runner pod Running' });
    await waitFor(async () => ((await getJson('secret', 'worker-token', ROUND))?.data as Record<string, string> | undefined)?.token, {
      timeoutMs: 30_000,
      description: 'token issued for worker',
    });
    const dyn = await waitFor(async () => {
      const c = await getJson('pvc', 'dyn', ROUND);
      return (c?.status as { phase?: string } | undefined)?.phase === 'Bound' ? c : undefined;
    }, { timeoutMs: 60_000, description: 'claim dyn Bound' });
    const before = new Map<string, Obj>();
    for (const o of mine) before.set(key(o), (await getJson(resourceOf[o.kind] as string, o.metadata.name, ROUND)) as Obj);

    await backups.create(newBackup({ namespace: INSTALL_NS, name: 'round', spec: { includedNamespaces: [ROUND], storageLocation: 'default' } }));
    const done = await waitFor(async () => {
      const b = await backups.get(INSTALL_NS, 'round');
      const phase = b?.status?.phase;
      return phase && !['New', 'InProgress', 'Finalizing', 'WaitingForPluginOperations'].includes(phase) ? b : undefined;
    }, { timeoutMs: 120_000, description: 'backup round to finish' });
    expect(done.status?.phase).toBe(BackupPhase.Completed);

    await kubectl(['delete', 'namespace', ROUND, '--wait=true', '--timeout=120s']);
    const oldVolume = (dyn.spec as { volumeName: string }).volumeName;
    await waitFor(async () => (await getJson('pv', oldVolume)) === undefined, { timeoutMs: 60_000, description: `volume ${oldVolume} deleted with its claim` });

    const r = await runRestore('round', { backupName: 'round' });
    expect(r.status, JSON.stringify(await store.getRestoreJson('round', 'results'))).toMatchObject({ phase: RestorePhase.Completed, errors: 0, warnings: 0 });
    for (const [k, orig] of before) {
      const now = await getJson(resourceOf[orig.kind] as string, orig.metadata.name, ROUND);
      expect(now, `${k} restored`).toBeDefined();
      const forCompare = (o: Obj) => (o.kind === 'PersistentVolumeClaim' ? { ...comparable(o), spec: { ...(o.spec as object), volumeName: undefined } } : comparable(o));
      expect(forCompare(now as Obj), k).toEqual(forCompare(orig));
    }
    await waitFor(async () => ((await getJson('pvc', 'dyn', ROUND))?.status as { phase?: string } | undefined)?.phase === 'Bound', {
      timeoutMs: 60_000,
      description: 'restored claim dyn Bound to a new volume',
    });
    // The running pod came back under its name and was adopted by its restored ReplicaSet (no second pod), which
    // in turn belongs to the restored Deployment: owner references point at the new UIDs.
    const podName = runningPod.metadata.name;
    const pod = await waitFor(async () => {
      const p = await getJson('pod', podName, ROUND);
      return (p?.status as { phase?: string } | undefined)?.phase === 'Running' ? p : undefined;
    }, { timeoutMs: 90_000, description: `restored pod ${podName} Running` });
    const podOwner = (pod.metadata.ownerReferences as { kind: string; name: string; uid: string }[])[0];
    const rs = await getJson('replicaset', podOwner?.name ?? '', ROUND);
    expect(podOwner).toMatchObject({ kind: 'ReplicaSet', uid: rs?.metadata.uid });
    const deploy = await getJson('deployment', 'runner', ROUND);
    expect((rs?.metadata.ownerReferences as { uid: string }[])[0]?.uid).toBe(deploy?.metadata.uid);
    const runnerPods = JSON.parse((await kubectl(['-n', ROUND, 'get', 'pods', '-l', 'app=runner', '-o', 'json'])).stdout) as { items: Obj[] };
    expect(runnerPods.items.map((p) => p.metadata.name)).toEqual([podName]);

    // The token Secret is issued anew for the restored ServiceAccount instead of being deleted as stale.
    const newSaUid = (await getJson('serviceaccount', 'worker', ROUND))?.metadata.uid;
    await waitFor(async () => {
      const t = await getJson('secret', 'worker-token', ROUND);
      const ann = (t?.metadata.annotations ?? {}) as Record<string, string>;
      return ann['kubernetes.io/service-account.uid'] === newSaUid && (t?.data as Record<string, string> | undefined)?.token;
    }, { timeoutMs: 30_000, description: 'token Secret issued for the restored ServiceAccount' });
    const list = (await store.getRestoreJson('round', 'resourceList')) as Record<string, string[]>;
    expect(list['v1/PersistentVolume']).toEqual([`${oldVolume}(skipped)`]);
    expect(list['v1/ConfigMap']).toContain(`${ROUND}/settings(created)`);
  });

  it('deleting a restore removes its files from storage', async () => {
    expect(await store.getRestoreJson('policy-none', 'results')).toBeDefined();
    await kubectl(['-n', INSTALL_NS, 'delete', 'restore', 'policy-none', '--wait=true', '--timeout=60s']);
    expect(await store.getRestoreJson('policy-none', 'results')).toBeUndefined();
  });
});
