import { Readable } from 'node:stream';
import { restoreRunOptions } from '../../../support/restore-run.js';
import { describe, expect, it } from 'vitest';
import { newRestore, type Restore } from '../../../../src/api/index.js';
import { ResultsCollector } from '../../../../src/api/results.js';
import { ItemActionRegistry } from '../../../../src/plugins/item-actions/registry.js';
import type { UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import { itemPath } from '../../../../src/server/archive/paths.js';
import { readBackupArchive, type ArchiveItemRef } from '../../../../src/server/archive/reader.js';
import { registerBuiltinRestoreActions } from '../../../../src/server/item-actions/builtin.js';
import { restoreArchiveSelection } from '../../../../src/server/restore/archive-selection.js';
import { runRestore, selectItems } from '../../../../src/server/restore/restorer.js';
import { FakeCluster } from './fake-object-client.js';
import { writeTarGz } from '../backup/tar.js';

type Spec = Partial<Restore['spec']>;
const restoreOf = (spec: Spec) => newRestore({ name: 'r1', spec: { backupName: 'b1', ...spec } });

const objects: [string, UnstructuredObject][] = [
  ['customresourcedefinitions.apiextensions.k8s.io', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' }, spec: { group: 'example.com', names: { kind: 'Widget' } } }],
  ['customresourcedefinitions.apiextensions.k8s.io', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gadgets.example.com' }, spec: { group: 'example.com', names: { kind: 'Gadget' } } }],
  ['clusterroles.rbac.authorization.k8s.io', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'reader', labels: { tier: 'web' } } }],
  ['persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-app' }, spec: { persistentVolumeReclaimPolicy: 'Retain', claimRef: { namespace: 'app', name: 'data' } } }],
  ['persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-other' }, spec: { persistentVolumeReclaimPolicy: 'Retain', claimRef: { namespace: 'other', name: 'data' } } }],
  ['nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }],
];
for (const ns of ['app', 'other', 'third']) {
  objects.push(
    ['namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { team: ns } } }],
    ['deployments.apps', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns, labels: { tier: 'web' } }, spec: { replicas: 1 } }],
    ['configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: ns }, data: { a: '1' } }],
    ['secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: ns, labels: { tier: 'web' } }, data: { p: 'eA==' } }],
    ['pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'done', namespace: ns }, spec: {}, status: { phase: 'Succeeded' } }],
    ['persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: ns }, spec: { volumeName: `pv-${ns}` } }],
    ['widgets.example.com', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: ns, labels: { tier: 'web' } }, spec: {} }],
    ['events', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1', namespace: ns } }],
  );
}

const entries = objects.map(([groupResource, o]) => ({
  path: itemPath({ groupResource, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}), name: o.metadata.name }),
  body: JSON.stringify(o),
}));

const specs: Spec[] = [
  {},
  { includedNamespaces: ['app'] },
  { includedNamespaces: ['app', 'oth*'] },
  { excludedNamespaces: ['other'] },
  { includedNamespaces: ['app'], includeClusterResources: true },
  { includedNamespaces: ['app'], includeClusterResources: false },
  { includeClusterResources: false },
  { includedResources: ['deployment', 'widgets.example.com'] },
  { includedNamespaces: ['app'], excludedResources: ['secrets', 'Widget'] },
  { includedNamespaces: ['app'], labelSelector: { matchLabels: { tier: 'web' } } },
  { orLabelSelectors: [{ matchLabels: { team: 'other' } }, { matchLabels: { tier: 'web' } }] },
  { includedNamespaces: ['other'], namespaceMapping: { other: 'copy' } },
];

describe('what a restore reads of its archive', () => {
  it('takes from the path what it can: namespaces, excluded resources, cluster-scoped items', () => {
    const sel = (spec: Spec) => restoreArchiveSelection(restoreOf(spec)).select;
    const ref = (groupResource: string, name: string, namespace?: string): ArchiveItemRef => ({ groupResource, name, ...(namespace ? { namespace } : {}) });
    const some = sel({ includedNamespaces: ['app'], excludedResources: ['secrets'] });
    expect(some(ref('configmaps', 'c', 'app'))).toBe(true);
    expect(some(ref('configmaps', 'c', 'other'))).toBe(false);
    expect(some(ref('secrets', 's', 'app'))).toBe(false);
    expect(some(ref('events', 'e', 'app'))).toBe(false);
    expect(some(ref('namespaces', 'app'))).toBe(true);
    expect(some(ref('namespaces', 'other'))).toBe(false);
    expect(some(ref('persistentvolumes', 'pv'))).toBe(true);
    expect(some(ref('nodes', 'n1'))).toBe(false);
    // Namespace objects are read whatever the resource filters say: the restored namespaces are made from them.
    expect(sel({ includedResources: ['configmaps'] })(ref('namespaces', 'app'))).toBe(true);
    expect(sel({ includeClusterResources: false })(ref('persistentvolumes', 'pv'))).toBe(false);
    // The kind decides some entries: those are read, then kept or dropped.
    expect(sel({ excludedResources: ['Person'] })(ref('people.example.com', 'ann', 'app'))).toBe(true);
    expect(sel({ excludedResources: ['Deployment'] })(ref('deployments.apps', 'web', 'app'))).toBe(false);
  });

  it('keeps, of what it parsed, what the resource filters and label selectors take, and every Namespace object read', () => {
    const keep = restoreArchiveSelection(restoreOf({ labelSelector: { matchLabels: { tier: 'web' } }, excludedResources: ['Widget'] })).keep;
    const item = (groupResource: string, o: UnstructuredObject) => ({ groupResource, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}), name: o.metadata.name, object: o });
    expect(keep(item('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'app', labels: { tier: 'web' } } }))).toBe(true);
    expect(keep(item('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'app' } }))).toBe(false);
    expect(keep(item('widgets.example.com', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'app', labels: { tier: 'web' } } }))).toBe(false);
    expect(keep(item('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } }))).toBe(true);
    expect(keep(item('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'app', labels: { tier: 'web' } }, status: { phase: 'Failed' } }))).toBe(false);
    // Some namespaces, cluster resources unset: only what namespaced items may need, known once all are read.
    const pv = (claimNamespace: string) => item('persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `pv-${claimNamespace}` }, spec: { claimRef: { namespace: claimNamespace, name: 'data' } } });
    const role = item('clusterroles.rbac.authorization.k8s.io', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'reader' } });
    const crd = item('customresourcedefinitions.apiextensions.k8s.io', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' } });
    const vsc = (snapshotNamespace: string) =>
      item('volumesnapshotcontents.snapshot.storage.k8s.io', { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotContent', metadata: { name: `vsc-${snapshotNamespace}` }, spec: { volumeSnapshotRef: { namespace: snapshotNamespace, name: 'snap' } } });
    const some = restoreArchiveSelection(restoreOf({ includedNamespaces: ['app'] })).keep;
    expect([pv('app'), pv('other'), role, crd, vsc('app'), vsc('other')].map(some)).toEqual([true, false, false, true, true, false]);
    const all = restoreArchiveSelection(restoreOf({ includedNamespaces: ['app'], includeClusterResources: true })).keep;
    expect([pv('app'), pv('other'), role, crd].map(all)).toEqual([true, true, true, true]);
    expect([pv('app'), pv('other'), role, crd].map(restoreArchiveSelection(restoreOf({})).keep)).toEqual([true, true, true, true]);
  });

  it.each(specs)('selects the same items from what it read as from the whole archive (%j)', async (spec) => {
    const data = await writeTarGz(entries);
    const restore = restoreOf(spec);
    const whole = await readBackupArchive(Readable.from(data));
    const read = await readBackupArchive(Readable.from(data), restoreArchiveSelection(restore));
    expect(selectItems(restore, read.items)).toEqual(selectItems(restore, whole.items));
    expect(read.present).toEqual(whole.present);
    if (Object.keys(spec).length) expect(read.items.length).toBeLessThan(whole.items.length);
  });

  it.each(specs)('restores the same objects from what it read as from the whole archive (%j)', async (spec) => {
    const data = await writeTarGz(entries);
    const run = async (selected: boolean) => {
      const restore = restoreOf(spec);
      const cluster = new FakeCluster();
      const results = new ResultsCollector();
      const archive = await readBackupArchive(Readable.from(data), selected ? restoreArchiveSelection(restore) : {});
      const out = await runRestore(restoreRunOptions({
        restore,
        archive,
        readAgain: async (select) => (await readBackupArchive(Readable.from(data), { select })).items,
        client: cluster,
        results,
      }));
      return { created: cluster.created, objects: [...cluster.objects.entries()], resourceList: out.resourceList, results: results.toJSON() };
    };
    expect(await run(true)).toEqual(await run(false));
  });

  it('never parses an item it does not select: a corrupt body in another namespace is read past', async () => {
    const data = await writeTarGz([...entries, { path: itemPath({ groupResource: 'configmaps', namespace: 'other', name: 'broken' }), body: '{not json' }]);
    const restore = restoreOf({ includedNamespaces: ['app'] });
    const parse = JSON.parse;
    const parsed: string[] = [];
    JSON.parse = (text: string, ...rest: unknown[]) => {
      const v = (parse as (t: string, ...r: unknown[]) => unknown)(text, ...rest) as UnstructuredObject | undefined;
      parsed.push(v?.metadata?.namespace ?? v?.metadata?.name ?? '?');
      return v;
    };
    let read;
    try {
      read = await readBackupArchive(Readable.from(data), restoreArchiveSelection(restore));
    } finally {
      JSON.parse = parse;
    }
    expect(read.warnings).toEqual([]);
    expect(parsed).not.toContain('other');
    expect(parsed).not.toContain('third');
    expect(read.items.map((i) => `${i.groupResource}/${i.namespace ?? ''}/${i.name}`)).toEqual([
      'customresourcedefinitions.apiextensions.k8s.io//widgets.example.com',
      'customresourcedefinitions.apiextensions.k8s.io//gadgets.example.com',
      'persistentvolumes//pv-app',
      'namespaces//app',
      'deployments.apps/app/web',
      'configmaps/app/settings',
      'secrets/app/creds',
      'persistentvolumeclaims/app/data',
      'widgets.example.com/app/w',
    ]);
    // The whole archive has it, and says so.
    const whole = await readBackupArchive(Readable.from(data));
    expect(whole.warnings).toEqual(['ignored resources/configmaps/namespaces/other/broken.json: not valid JSON']);
  });

  it("reads again an item action's additional items it did not read, and the Namespace objects they need", async () => {
    const data = await writeTarGz(entries);
    const reads: number[] = [];
    const run = async (selected: boolean) => {
      const restore = restoreOf({ includedNamespaces: ['app'], labelSelector: { matchLabels: { tier: 'web' } } });
      const cluster = new FakeCluster();
      const registry = registerBuiltinRestoreActions(new ItemActionRegistry()).registerRestoreAction({
        name: 'example/related',
        appliesTo: () => ({ includedResources: ['deployments.apps'] }),
        execute: async (item) => ({
          item,
          additionalItems: [
            { groupResource: 'configmaps', namespace: 'app', name: 'settings' },
            { groupResource: 'secrets', namespace: 'third', name: 'creds' },
            { groupResource: 'configmaps', namespace: 'app', name: 'absent' },
          ],
        }),
      });
      let count = 0;
      const archive = await readBackupArchive(Readable.from(data), selected ? restoreArchiveSelection(restore) : {});
      const out = await runRestore(restoreRunOptions({
        restore,
        archive,
        readAgain: async (select) => {
          count++;
          return (await readBackupArchive(Readable.from(data), { select })).items;
        },
        client: cluster,
        registry,
        results: new ResultsCollector(),
      }));
      reads.push(count);
      return { created: cluster.created, objects: [...cluster.objects.entries()], resourceList: out.resourceList };
    };
    const fromSelection = await run(true);
    expect(fromSelection).toEqual(await run(false));
    expect(fromSelection.created).toContain('ConfigMap app/settings');
    expect(fromSelection.created).toContain('Secret third/creds');
    expect(fromSelection.objects.find(([k]) => k === 'Namespace//third')?.[1].metadata.labels).toMatchObject({ team: 'third' });
    // The config map, the secret and the namespace: one read each, none for the whole archive, none for what it lacks.
    expect(reads).toEqual([3, 0]);
  });
});
