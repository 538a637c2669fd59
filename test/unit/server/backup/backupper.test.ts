import { afterEach, describe, expect, it } from 'vitest';
import { newBackup, type BackupSpec } from '../../../../src/api/index.js';
import { createLogger } from '../../../../src/base/logger.js';
import type { Kube } from '../../../../src/kube/client.js';
import { registerBuiltinBackupActions } from '../../../../src/server/item-actions/builtin.js';
import { ItemActionRegistry } from '../../../../src/plugins/item-actions/registry.js';
import { BackupArchiveWriter } from '../../../../src/server/archive/writer.js';
import { backupItems, type BackupProgressUpdate } from '../../../../src/server/backup/backupper.js';
import { FakeCluster } from './fake-cluster.js';
import { readTarGz } from './tar.js';
import { Writable } from 'node:stream';

const quiet = createLogger({ destination: new Writable({ write: (_c, _e, done) => done() }) });

function fakeKube(cluster: FakeCluster): Kube {
  return {
    server: 'fake',
    rbac: { listClusterRoleBinding: async () => ({ items: (cluster.objects.get('clusterrolebindings') ?? []) as unknown[] }) },
    apiext: { listCustomResourceDefinition: async () => ({ items: (cluster.objects.get('customresourcedefinitions') ?? []) as unknown[] }) },
  } as unknown as Kube;
}

/** A namespace `app` with a typical application, plus things around it that a namespace backup must not take. */
function appCluster(): FakeCluster {
  return new FakeCluster()
    .namespace('app', { team: 'a' })
    .namespace('other')
    .namespace('hidden', { 'velero.io/exclude-from-backup': 'true' })
    .add('pods', { name: 'web-1', namespace: 'app', labels: { app: 'web' }, spec: { serviceAccountName: 'web', volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] } })
    .add('persistentvolumeclaims', { name: 'data', namespace: 'app', spec: { volumeName: 'pv-data' } })
    .add('persistentvolumes', { name: 'pv-data', spec: { persistentVolumeReclaimPolicy: 'Delete', claimRef: { name: 'data', namespace: 'app' } } })
    .add('persistentvolumes', { name: 'pv-unrelated', spec: {} })
    .add('serviceaccounts', { name: 'web', namespace: 'app' })
    .add('configmaps', { name: 'settings', namespace: 'app', labels: { app: 'web' } })
    .add('configmaps', { name: 'scratch', namespace: 'app', labels: { 'velero.io/exclude-from-backup': 'true' } })
    .add('configmaps', { name: 'elsewhere', namespace: 'other' })
    .add('configmaps', { name: 'secret-place', namespace: 'hidden' })
    .add('secrets', { name: 'creds', namespace: 'app', data: { password: 'c2VjcmV0' } })
    .add('services', { name: 'web', namespace: 'app' })
    .add('deployments', { name: 'web', namespace: 'app', labels: { app: 'web' } })
    .add('events', { name: 'ev1', namespace: 'app' })
    .add('nodes', { name: 'node-1' })
    .add('widgets', { name: 'w1', namespace: 'app' })
    .add('customresourcedefinitions', { name: 'widgets.example.com', spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' } } })
    .add('customresourcedefinitions', { name: 'gadgets.example.com', spec: { group: 'example.com', names: { kind: 'Gadget', plural: 'gadgets' } } })
    .add('clusterroles', { name: 'web-reader' })
    .add('clusterroles', { name: 'unrelated' })
    .add('clusterrolebindings', { name: 'web-reader', subjects: [{ kind: 'ServiceAccount', name: 'web', namespace: 'app' }], roleRef: { kind: 'ClusterRole', name: 'web-reader', apiGroup: 'rbac.authorization.k8s.io' } })
    .add('backups', { name: 'b0', namespace: 'app' });
}

const writers: BackupArchiveWriter[] = [];
afterEach(async () => {
  for (const w of writers.splice(0)) await w.dispose();
});

async function run(cluster: FakeCluster, spec: BackupSpec, extra: { registry?: ItemActionRegistry; pageSize?: number } = {}) {
  const archive = await BackupArchiveWriter.create();
  writers.push(archive);
  const progress: BackupProgressUpdate[] = [];
  const out = await backupItems({
    kube: fakeKube(cluster),
    api: cluster,
    backup: newBackup({ namespace: 'velero', name: 'b1', spec }),
    registry: extra.registry ?? registerBuiltinBackupActions(new ItemActionRegistry()),
    archive,
    log: quiet,
    onProgress: (p) => progress.push(p),
    ...(extra.pageSize ? { pageSize: extra.pageSize } : {}),
  });
  const done = await archive.finish();
  const entries = await readTarGz(done.path);
  const plain = entries.map((e) => e.name).filter((n) => n.startsWith('resources/') && !n.includes('-preferredversion/')).sort();
  return { out, entries, plain, progress };
}

describe('backing up items', () => {
  it('backs up one namespace with its related cluster items, and nothing else', async () => {
    const { out, plain } = await run(appCluster(), { includedNamespaces: ['app'] });
    expect(plain).toEqual([
      'resources/clusterrolebindings.rbac.authorization.k8s.io/cluster/web-reader.json',
      'resources/clusterroles.rbac.authorization.k8s.io/cluster/web-reader.json',
      'resources/configmaps/namespaces/app/settings.json',
      'resources/customresourcedefinitions.apiextensions.k8s.io/cluster/widgets.example.com.json',
      'resources/deployments.apps/namespaces/app/web.json',
      'resources/namespaces/cluster/app.json',
      'resources/persistentvolumeclaims/namespaces/app/data.json',
      'resources/persistentvolumes/cluster/pv-data.json',
      'resources/pods/namespaces/app/web-1.json',
      'resources/secrets/namespaces/app/creds.json',
      'resources/serviceaccounts/namespaces/app/web.json',
      'resources/services/namespaces/app/web.json',
      'resources/widgets.example.com/namespaces/app/w1.json',
    ]);
    expect(out.itemsBackedUp).toBe(13);
    expect(out.results.errorCount).toBe(0);
    expect(out.resourceList).toEqual({
      'apiextensions.k8s.io/v1/CustomResourceDefinition': ['widgets.example.com'],
      'apps/v1/Deployment': ['app/web'],
      'example.com/v1/Widget': ['app/w1'],
      'rbac.authorization.k8s.io/v1/ClusterRole': ['web-reader'],
      'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ['web-reader'],
      'v1/ConfigMap': ['app/settings'],
      'v1/Namespace': ['app'],
      'v1/PersistentVolume': ['pv-data'],
      'v1/PersistentVolumeClaim': ['app/data'],
      'v1/Pod': ['app/web-1'],
      'v1/Secret': ['app/creds'],
      'v1/Service': ['app/web'],
      'v1/ServiceAccount': ['app/web'],
    });
    expect(out.volumeInfo.toJSON()).toEqual([
      {
        pvcName: 'data',
        pvcNamespace: 'app',
        pvName: 'pv-data',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: true,
        skippedReason: expect.stringMatching(/^any: .*;$/),
        pvInfo: { reclaimPolicy: 'Delete', labels: null },
      },
    ]);
  });

  it('stores items with apiVersion and kind, as the API returns them', async () => {
    const { entries } = await run(appCluster(), { includedNamespaces: ['app'] });
    const secret = JSON.parse(entries.find((e) => e.name === 'resources/secrets/namespaces/app/creds.json')?.body ?? '{}') as Record<string, unknown>;
    expect(secret).toMatchObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'app' }, data: { password: 'c2VjcmV0' } });
  });

  it('backs up the whole cluster except what is never backed up and namespaces labelled excluded', async () => {
    const { plain } = await run(appCluster(), {});
    expect(plain).toContain('resources/persistentvolumes/cluster/pv-unrelated.json');
    expect(plain).toContain('resources/clusterroles.rbac.authorization.k8s.io/cluster/unrelated.json');
    expect(plain).toContain('resources/customresourcedefinitions.apiextensions.k8s.io/cluster/gadgets.example.com.json');
    expect(plain).toContain('resources/configmaps/namespaces/other/elsewhere.json');
    expect(plain.filter((p) => /events|nodes|backups\.velero\.io|\/hidden\/|hidden\.json|scratch/.test(p))).toEqual([]);
  });

  it('leaves cluster-scoped items out when includeClusterResources is false', async () => {
    const { plain, out } = await run(appCluster(), { includedNamespaces: ['app'], includeClusterResources: false });
    expect(plain.filter((p) => p.includes('/cluster/'))).toEqual(['resources/namespaces/cluster/app.json']);
    expect(plain).toContain('resources/persistentvolumeclaims/namespaces/app/data.json');
    // The claim's volume is still listed in the volume info, without PV details.
    expect(JSON.stringify(out.volumeInfo.toJSON())).toBe(
      '[{"pvcName":"data","pvcNamespace":"app","pvName":"pv-data","snapshotDataMoved":false,"preserveLocalSnapshot":false,"skipped":true,"skippedReason":"any: no volume backup method selected for the volume (resource backup only);"}]',
    );
  });

  it('honours include/exclude resources with short names and kinds', async () => {
    const { plain } = await run(appCluster(), { includedNamespaces: ['app'], includedResources: ['cm', 'Deployment'], excludedResources: [] });
    expect(plain).toEqual(['resources/configmaps/namespaces/app/settings.json', 'resources/deployments.apps/namespaces/app/web.json']);
  });

  it('takes only labelled items with a selector, their related items, and the namespaces holding them', async () => {
    const { plain } = await run(appCluster(), { labelSelector: { matchLabels: { app: 'web' } } });
    expect(plain).toEqual([
      'resources/clusterrolebindings.rbac.authorization.k8s.io/cluster/web-reader.json',
      'resources/clusterroles.rbac.authorization.k8s.io/cluster/web-reader.json',
      'resources/configmaps/namespaces/app/settings.json',
      'resources/deployments.apps/namespaces/app/web.json',
      'resources/namespaces/cluster/app.json',
      'resources/persistentvolumeclaims/namespaces/app/data.json',
      'resources/persistentvolumes/cluster/pv-data.json',
      'resources/pods/namespaces/app/web-1.json',
      'resources/serviceaccounts/namespaces/app/web.json',
    ]);
  });

  it('ORs orLabelSelectors', async () => {
    const { plain } = await run(appCluster(), { includedNamespaces: ['app'], includedResources: ['configmaps', 'namespaces'], orLabelSelectors: [{ matchLabels: { app: 'web' } }, { matchLabels: { team: 'a' } }] });
    expect(plain).toEqual(['resources/configmaps/namespaces/app/settings.json', 'resources/namespaces/cluster/app.json']);
  });

  it('excludes namespaces', async () => {
    const { plain } = await run(appCluster(), { excludedNamespaces: ['app'], includedResources: ['configmaps'] });
    expect(plain).toEqual(['resources/configmaps/namespaces/other/elsewhere.json']);
  });

  it('pages through long lists and reports progress up to an exact total', async () => {
    const cluster = new FakeCluster().namespace('big');
    for (let i = 0; i < 23; i++) cluster.add('configmaps', { name: `cm-${String(i).padStart(2, '0')}`, namespace: 'big' });
    const { out, plain, progress } = await run(cluster, { includedNamespaces: ['big'] }, { pageSize: 5 });
    expect(plain).toHaveLength(24);
    expect(out.totalItems).toBe(24);
    expect(cluster.requests.filter((r) => r.endsWith('/configmaps')).length).toBeGreaterThanOrEqual(5);
    const last = progress.at(-1);
    expect(last).toEqual({ totalItems: 24, itemsBackedUp: 24 });
    for (let i = 1; i < progress.length; i++) expect((progress[i] as BackupProgressUpdate).itemsBackedUp).toBeGreaterThanOrEqual((progress[i - 1] as BackupProgressUpdate).itemsBackedUp);
    expect(progress.some((p) => p.totalItems >= 20 && p.itemsBackedUp < 5)).toBe(true);
  });

  it('counts a failing item action as an error of the item namespace and skips that item', async () => {
    const registry = new ItemActionRegistry().registerBackupAction({
      name: 'test/fails-on-settings',
      appliesTo: () => ({ includedResources: ['configmaps'] }),
      execute: async (item) => {
        if (item.metadata.name === 'settings') throw new Error('boom');
        return { item, additionalItems: [] };
      },
    });
    const { out, plain } = await run(appCluster(), { includedNamespaces: ['app'], includedResources: ['configmaps'] }, { registry });
    expect(plain).toEqual([]);
    expect(out.results.errorCount).toBe(1);
    expect(out.results.toJSON().errors.namespaces?.app?.[0]).toContain('boom');
  });

  it('lets an action change the stored item', async () => {
    const registry = new ItemActionRegistry().registerBackupAction({
      name: 'test/annotate',
      appliesTo: () => ({ includedResources: ['services'] }),
      execute: async (item) => ({ item: { ...item, metadata: { ...item.metadata, annotations: { touched: 'yes' } } }, additionalItems: [] }),
    });
    const { entries } = await run(appCluster(), { includedNamespaces: ['app'], includedResources: ['services'] }, { registry });
    const svc = JSON.parse(entries.find((e) => e.name === 'resources/services/v1-preferredversion/namespaces/app/web.json')?.body ?? '{}') as { metadata: { annotations?: Record<string, string> } };
    expect(svc.metadata.annotations).toEqual({ touched: 'yes' });
  });

  it("leaves out an action's related item of an excluded resource, unless the item it returned asks for its additional items", async () => {
    const relatedSecret = (mustInclude: boolean) =>
      new ItemActionRegistry().registerBackupAction({
        name: 'test/with-secret',
        appliesTo: () => ({ includedResources: ['configmaps'] }),
        execute: async (item) => ({
          item: mustInclude ? { ...item, metadata: { ...item.metadata, annotations: { 'backup.velero.io/must-include-additional-items': 'true' } } } : item,
          additionalItems: item.metadata.name === 'settings' ? [{ groupResource: 'secrets', namespace: 'app', name: 'creds' }] : [],
        }),
      });
    const spec = { includedNamespaces: ['app'], includedResources: ['configmaps'] };
    expect((await run(appCluster(), spec, { registry: relatedSecret(false) })).plain).toEqual(['resources/configmaps/namespaces/app/settings.json']);
    expect((await run(appCluster(), spec, { registry: relatedSecret(true) })).plain).toEqual([
      'resources/configmaps/namespaces/app/settings.json',
      'resources/secrets/namespaces/app/creds.json',
    ]);
  });

  it('lists per namespace for a few namespaces and cluster-wide (filtered) for many', async () => {
    const cluster = new FakeCluster();
    for (let i = 0; i < 13; i++) cluster.namespace(`ns${i}`).add('configmaps', { name: 'cm', namespace: `ns${i}` });
    const few = await run(cluster, { includedNamespaces: ['ns1', 'ns2'], includedResources: ['configmaps'] });
    expect(few.plain).toEqual(['resources/configmaps/namespaces/ns1/cm.json', 'resources/configmaps/namespaces/ns2/cm.json']);
    expect(cluster.requests).toContain('/api/v1/namespaces/ns1/configmaps');
    cluster.requests.length = 0;
    const many = Array.from({ length: 12 }, (_, i) => `ns${i}`);
    const lots = await run(cluster, { includedNamespaces: many, includedResources: ['configmaps'] });
    expect(lots.plain).toHaveLength(12);
    expect(lots.plain).not.toContain('resources/configmaps/namespaces/ns12/cm.json');
    expect(cluster.requests.filter((r) => r.includes('/namespaces/') && r.endsWith('/configmaps'))).toEqual([]);
  });

  it('lists a resource again when its continue token expires, without taking items twice', async () => {
    const cluster = new FakeCluster().namespace('big');
    for (let i = 0; i < 7; i++) cluster.add('configmaps', { name: `cm-${i}`, namespace: 'big' });
    cluster.expireNextContinue = true;
    const { out, plain } = await run(cluster, { includedNamespaces: ['big'], includedResources: ['configmaps'] }, { pageSize: 3 });
    expect(plain).toHaveLength(7);
    expect(out.results.errorCount).toBe(0);
    expect(out.resourceList['v1/ConfigMap']).toHaveLength(7);
  });

  it('warns about namespaces and resources named in filters that the cluster does not have', async () => {
    const { out } = await run(appCluster(), { includedNamespaces: ['app', 'gone'], includedResources: ['configmaps', 'gizmos'] });
    expect(out.results.toJSON().warnings.velero).toEqual([
      'resource "gizmos" named in a filter is not served by the cluster',
      'included namespace "gone" does not exist or is excluded',
    ]);
    expect(out.results.warningCount).toBe(2);
    expect(out.results.errorCount).toBe(0);
  });
});
