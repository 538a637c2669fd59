import { restoreRunOptions } from '../../../support/restore-run.js';
import { describe, expect, it } from 'vitest';
import { newRestore, type Restore } from '../../../../src/api/index.js';
import { ItemActionRegistry } from '../../../../src/plugins/item-actions/registry.js';
import type { UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import type { ArchiveItem } from '../../../../src/server/archive/reader.js';
import { ResultsCollector } from '../../../../src/api/results.js';
import { ApiError } from '../../../../src/server/restore/dynamic-client.js';
import { FakeCluster } from './fake-object-client.js';
import { runRestore } from '../../../../src/server/restore/restorer.js';
import type { StoredBackupVolumeInfo } from '../../../../src/api/volume-info.js';
import { movedVolumeInfo } from './moved-volume-info.js';

const item = (groupResource: string, obj: UnstructuredObject): ArchiveItem => ({
  groupResource,
  ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
  name: obj.metadata.name,
  object: obj,
});

const items: ArchiveItem[] = [
  item('deployments.apps', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'app', uid: 'old' }, spec: { replicas: 1 } }),
  item('widgets.example.com', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'app' }, spec: {} }),
  item('services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'app' }, spec: { clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'] } }),
  item('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'app' }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } }),
  item('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'done', namespace: 'app' }, spec: {}, status: { phase: 'Succeeded' } }),
  item('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'app', labels: { tier: 'web' } }, data: { a: '1' } }),
  item('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'app' }, data: { p: 'eA==' } }),
  item('persistentvolumeclaims', {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: 'app', annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } },
    spec: { volumeName: 'pvc-dyn' },
  }),
  item('persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pvc-dyn' }, spec: { persistentVolumeReclaimPolicy: 'Delete', claimRef: { namespace: 'app', name: 'data' } } }),
  item('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app', labels: { team: 'blue' }, uid: 'nsuid' }, status: { phase: 'Active' } }),
  item('customresourcedefinitions.apiextensions.k8s.io', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' }, spec: { group: 'example.com', names: { kind: 'Widget' } } }),
];

async function restoreWith(cluster: FakeCluster, spec: Partial<Restore['spec']> = {}, name = 'r1', volumeInfos: StoredBackupVolumeInfo[] = []) {
  const results = new ResultsCollector();
  const progress: number[] = [];
  const out = await runRestore(restoreRunOptions({
    restore: newRestore({ name, spec: { backupName: 'b1', ...spec } }),
    archive: { items, warnings: [] },
    volumeInfos,
    client: cluster,
    results,
    onProgress: (p) => void progress.push(p.itemsRestored),
  }));
  return { out, results, progress };
}

describe('restoring the items of an archive', () => {
  it('creates in priority order, CRDs first, namespaces before their objects, skipping completed pods', async () => {
    const cluster = new FakeCluster();
    const { out, results } = await restoreWith(cluster);
    expect(cluster.created).toEqual([
      'CustomResourceDefinition widgets.example.com',
      'Namespace app',
      'PersistentVolumeClaim app/data',
      'Secret app/creds',
      'ConfigMap app/settings',
      'Pod app/web-1',
      'Service app/web',
      'Deployment app/web',
      'Widget app/w1',
    ]);
    expect(results.toJSON()).toEqual({ warnings: {}, errors: {} });
    expect(out).toMatchObject({ totalItems: 10, itemsRestored: 10 });
    expect(out.resourceList).toEqual({
      'apiextensions.k8s.io/v1/CustomResourceDefinition': ['widgets.example.com(created)'],
      'apps/v1/Deployment': ['app/web(created)'],
      'example.com/v1/Widget': ['app/w1(created)'],
      'v1/ConfigMap': ['app/settings(created)'],
      'v1/Namespace': ['app(created)'],
      'v1/PersistentVolume': ['pvc-dyn(skipped)'],
      'v1/PersistentVolumeClaim': ['app/data(created)'],
      'v1/Pod': ['app/web-1(created)'],
      'v1/Secret': ['app/creds(created)'],
      'v1/Service': ['app/web(created)'],
    });
  });

  it('sanitises what it creates and labels it with the backup and restore', async () => {
    const cluster = new FakeCluster();
    await restoreWith(cluster);
    const deploy = await cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'app', name: 'web' });
    expect(deploy?.metadata.uid).toBe('uid-7');
    expect(deploy?.metadata.labels).toEqual({ 'velero.io/backup-name': 'b1', 'velero.io/restore-name': 'r1' });
    const pod = await cluster.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'app', name: 'web-1' });
    expect(pod?.spec).toEqual({});
    expect(pod?.status).toBeUndefined();
    const svc = await cluster.get({ apiVersion: 'v1', kind: 'Service', namespace: 'app', name: 'web' });
    expect(svc?.spec).toEqual({});
    const ns = await cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: 'app' });
    expect(ns?.metadata.labels).toEqual({ team: 'blue', 'velero.io/backup-name': 'b1', 'velero.io/restore-name': 'r1' });
  });

  it('does not restore a dynamically provisioned volume; its claim is restored unbound', async () => {
    const cluster = new FakeCluster();
    await restoreWith(cluster, {}, 'r1', [{ pvName: 'pvc-dyn', skipped: true, pvInfo: { reclaimPolicy: 'Delete' } }]);
    expect(await cluster.get({ apiVersion: 'v1', kind: 'PersistentVolume', name: 'pvc-dyn' })).toBeUndefined();
    const pvc = await cluster.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'app', name: 'data' });
    expect(pvc?.spec).toEqual({});
    expect(pvc?.metadata.annotations).toBeUndefined();
  });

  it('maps namespaces and filters by the namespace in the backup', async () => {
    const cluster = new FakeCluster();
    const { out } = await restoreWith(cluster, { namespaceMapping: { app: 'copy' }, includedNamespaces: ['app'], includedResources: ['configmaps', 'namespaces'] });
    expect(cluster.created).toEqual(['Namespace copy', 'ConfigMap copy/settings']);
    expect((await cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: 'copy' }))?.metadata.labels?.team).toBe('blue');
    expect(out.resourceList).toEqual({ 'v1/ConfigMap': ['copy/settings(created)'], 'v1/Namespace': ['copy(created)'] });
    const none = new FakeCluster();
    await restoreWith(none, { includedNamespaces: ['other'] });
    expect(none.created).toEqual([]);
  });

  it('with a namespace filter, restores only the cluster resources the restored items need', async () => {
    const extra = item('clusterroles.rbac.authorization.k8s.io', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'unrelated' } });
    items.push(extra);
    try {
      const filtered = new FakeCluster();
      const { out } = await restoreWith(filtered, { includedNamespaces: ['app'] });
      expect(filtered.created).toContain('CustomResourceDefinition widgets.example.com');
      expect(filtered.created).not.toContain('ClusterRole unrelated');
      expect(out.resourceList['v1/PersistentVolume']).toEqual(['pvc-dyn(skipped)']);
      const noWidgets = new FakeCluster();
      await restoreWith(noWidgets, { includedNamespaces: ['app'], excludedResources: ['widgets.example.com'] });
      expect(noWidgets.created).not.toContain('CustomResourceDefinition widgets.example.com');
      const all = new FakeCluster();
      await restoreWith(all);
      expect(all.created).toContain('ClusterRole unrelated');
      const forced = new FakeCluster();
      await restoreWith(forced, { includedNamespaces: ['app'], includeClusterResources: true });
      expect(forced.created).toContain('ClusterRole unrelated');
    } finally {
      items.pop();
    }
  });

  it('selects by labels and leaves cluster resources out when asked', async () => {
    const cluster = new FakeCluster();
    await restoreWith(cluster, { labelSelector: { matchLabels: { tier: 'web' } }, includeClusterResources: false });
    expect(cluster.created).toEqual(['Namespace app', 'ConfigMap app/settings']);
  });

  it('running again (a server restart) finds its own objects and reports them restored, without warnings', async () => {
    const cluster = new FakeCluster();
    await restoreWith(cluster);
    const again = await restoreWith(cluster);
    expect(again.results.toJSON()).toEqual({ warnings: {}, errors: {} });
    expect(again.out.resourceList['v1/ConfigMap']).toEqual(['app/settings(created)']);
    expect(cluster.created).toHaveLength(9);
  });

  it('another restore over existing, unchanged objects skips them quietly', async () => {
    const cluster = new FakeCluster();
    await restoreWith(cluster);
    const second = await restoreWith(cluster, {}, 'r2');
    expect(second.results.toJSON()).toEqual({ warnings: {}, errors: {} });
    expect(second.out.resourceList['v1/ConfigMap']).toEqual(['app/settings(skipped)']);
    expect(second.out.resourceList['v1/Namespace']).toBeUndefined();
  });

  it('re-points owner references at restored owners and drops the others', async () => {
    const cluster = new FakeCluster();
    const results = new ResultsCollector();
    const owner = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-old', controller: true, blockOwnerDeletion: true };
    await runRestore(restoreRunOptions({
      restore: newRestore({ name: 'r1', spec: { backupName: 'b1' } }),
      archive: {
        warnings: [],
        items: [
          item('deployments.apps', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'app', uid: 'd-old' }, spec: {} }),
          item('replicasets.apps', { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-1', namespace: 'app', uid: 'rs-old', ownerReferences: [owner] }, spec: {} }),
          item('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'orphan', namespace: 'app', ownerReferences: [{ ...owner, kind: 'Gone', uid: 'g-old' }] } }),
        ],
      },
      client: cluster,
      registry: new ItemActionRegistry(),
      results,
    }));
    const deploy = await cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'app', name: 'web' });
    const rs = await cluster.get({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'app', name: 'web-1' });
    expect(rs?.metadata.ownerReferences).toEqual([{ ...owner, uid: deploy?.metadata.uid }]);
    expect((await cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'app', name: 'orphan' }))?.metadata.ownerReferences).toBeUndefined();
    expect(results.toJSON()).toEqual({ warnings: {}, errors: {} });
  });

  it('writes status back only for the resources spec.restoreStatus names', async () => {
    const cluster = new FakeCluster();
    await restoreWith(cluster, { restoreStatus: { includedResources: ['pods'] } });
    expect(cluster.statusWrites).toEqual([{ name: 'Pod web-1', status: { phase: 'Running' } }]);
    const none = new FakeCluster();
    await restoreWith(none);
    expect(none.statusWrites).toEqual([]);
  });

  it('records a failed item as an error of its namespace and carries on', async () => {
    const cluster = new FakeCluster();
    cluster.failCreate = (o) => (o.kind === 'Secret' ? new ApiError(422, 'Invalid', 'Secret "creds" is invalid: data: too long') : undefined);
    const { out, results } = await restoreWith(cluster);
    expect(results.toJSON().errors).toEqual({ namespaces: { app: ['error restoring secrets/app/creds: Secret "creds" is invalid: data: too long'] } });
    expect(out.resourceList['v1/Secret']).toEqual(['app/creds(failed)']);
    expect(cluster.created).toContain('Deployment app/web');
    expect(out.itemsRestored).toBe(10);
  });
});

describe('pod volume restores of restored pods (fs-backup)', () => {
  function hook(errors: string[] = []) {
    const calls: { from: string; pod: string; uid: string | undefined }[] = [];
    return {
      calls,
      afterPodCreated: async (o: { podFromBackup: UnstructuredObject; pod: UnstructuredObject }) => {
        calls.push({ from: `${o.podFromBackup.metadata.namespace ?? ''}/${o.podFromBackup.metadata.name}`, pod: `${o.pod.metadata.namespace ?? ''}/${o.pod.metadata.name}`, uid: o.pod.metadata.uid });
        return errors;
      },
    };
  }
  const restoreOnce = (cluster: FakeCluster, name: string, podVolumes: ReturnType<typeof hook>, spec: Partial<Restore['spec']> = {}) => {
    const results = new ResultsCollector();
    return runRestore(restoreRunOptions({
      restore: newRestore({ name, spec: { backupName: 'b1', ...spec } }),
      archive: { items, warnings: [] },
      client: cluster,
      results,
      podVolumes,
    })).then(() => results);
  };

  it('starts them for each pod it creates, with the backup-time pod and the created one (new namespace, new UID)', async () => {
    const cluster = new FakeCluster();
    const h = hook();
    await restoreOnce(cluster, 'r1', h, { namespaceMapping: { app: 'copy' } });
    const live = await cluster.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'copy', name: 'web-1' });
    expect(h.calls).toEqual([{ from: 'app/web-1', pod: 'copy/web-1', uid: live?.metadata.uid }]);
  });

  it('again after a restart (its own pod exists), but not for a pod some other restore or user made', async () => {
    const cluster = new FakeCluster();
    await restoreOnce(cluster, 'r1', hook());
    const rerun = hook();
    await restoreOnce(cluster, 'r1', rerun);
    expect(rerun.calls.map((c) => c.pod)).toEqual(['app/web-1']);
    const other = hook();
    await restoreOnce(cluster, 'r2', other);
    expect(other.calls).toEqual([]);
  });

  it('reports what could not be started as restore errors', async () => {
    const results = await restoreOnce(new FakeCluster(), 'r1', hook(['could not create the pod volume restore of volume data: denied']));
    expect(results.toJSON().errors).toEqual({ velero: ['could not create the pod volume restore of volume data: denied'] });
  });
});

describe('claims whose data the backup moved (CSI snapshot data movement)', () => {
  const movedItems: ArchiveItem[] = [
    item('persistentvolumeclaims', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'data',
        namespace: 'app',
        uid: 'pvc-uid-old',
        annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'volume.kubernetes.io/selected-node': 'n1', 'volume.kubernetes.io/storage-provisioner': 'hostpath.csi.k8s.io', keep: 'me' },
      },
      spec: { volumeName: 'pvc-moved', storageClassName: 'csi-hostpath-sc', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } }, dataSource: { kind: 'VolumeSnapshot', name: 's' } },
    }),
    item('persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pvc-moved' }, spec: { persistentVolumeReclaimPolicy: 'Retain', claimRef: { namespace: 'app', name: 'data' } } }),
    item('persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'other', namespace: 'app', uid: 'o' }, spec: { storageClassName: 'csi-hostpath-sc' } }),
  ];
  const movedInfo = movedVolumeInfo({ pvName: 'pvc-moved', size: 10, reclaimPolicy: 'Retain' });
  function ddHook(errors: string[] = []) {
    const calls: { from: string; fromUid: string | undefined; pvc: string; selector: unknown }[] = [];
    return {
      calls,
      afterPvcCreated: async (o: { pvcFromBackup: UnstructuredObject; pvc: UnstructuredObject }) => {
        calls.push({
          from: `${o.pvcFromBackup.metadata.namespace ?? ''}/${o.pvcFromBackup.metadata.name}`,
          fromUid: o.pvcFromBackup.metadata.uid,
          pvc: `${o.pvc.metadata.namespace ?? ''}/${o.pvc.metadata.name}`,
          selector: (o.pvc.spec as { selector?: unknown }).selector,
        });
        return errors;
      },
    };
  }
  const restoreMoved = (cluster: FakeCluster, dataDownloads: ReturnType<typeof ddHook>, spec: Partial<Restore['spec']> = {}, name = 'r1') => {
    const results = new ResultsCollector();
    return runRestore(restoreRunOptions({
      restore: newRestore({ name, spec: { backupName: 'b1', ...spec } }),
      archive: { items: movedItems, warnings: [] },
      volumeInfos: [movedInfo],
      client: cluster,
      results,
      dataDownloads,
    })).then((out) => ({ out, results }));
  };

  it('does not restore the PV; the claim gets a dynamic-pv-restore selector and loses its volume, data source and binding annotations', async () => {
    const cluster = new FakeCluster();
    const h = ddHook();
    const { out, results } = await restoreMoved(cluster, h, { namespaceMapping: { app: 'copy' } });
    expect(results.errorCount).toBe(0);
    expect(out.resourceList['v1/PersistentVolume']).toEqual(['pvc-moved(skipped)']);
    expect(cluster.created.filter((c) => c.startsWith('PersistentVolume '))).toEqual([]);
    const pvc = await cluster.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'copy', name: 'data' });
    const spec = pvc?.spec as Record<string, unknown>;
    expect(spec.volumeName).toBeUndefined();
    expect(spec.dataSource).toBeUndefined();
    const value = (spec.selector as { matchLabels: Record<string, string> }).matchLabels['velero.io/dynamic-pv-restore'] ?? '';
    expect(value).toMatch(/^copy\.data\.[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(pvc?.metadata.annotations).toEqual({ keep: 'me' });
    expect(pvc?.metadata.labels).toMatchObject({ 'velero.io/restore-name': 'r1', 'velero.io/backup-name': 'b1' });
    // The DataDownload is started with the backup-time claim (its old UID) and the created one.
    expect(h.calls).toEqual([{ from: 'app/data', fromUid: 'pvc-uid-old', pvc: 'copy/data', selector: spec.selector }]);
    // A claim without moved data is restored as before.
    const other = await cluster.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'copy', name: 'other' });
    expect((other?.spec as Record<string, unknown>).selector).toBeUndefined();
  });

  it('calls the hook again after a restart (the claim is its own), not for a claim that was there before', async () => {
    const cluster = new FakeCluster();
    await restoreMoved(cluster, ddHook());
    const rerun = ddHook();
    await restoreMoved(cluster, rerun);
    expect(rerun.calls.map((c) => c.pvc)).toEqual(['app/data']);
    const other = ddHook();
    await restoreMoved(cluster, other, {}, 'r2');
    expect(other.calls).toEqual([]);
  });

  it('restorePVs: false leaves the claim without a selector (no data movement)', async () => {
    const cluster = new FakeCluster();
    await restoreMoved(cluster, ddHook(), { restorePVs: false });
    const pvc = await cluster.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'app', name: 'data' });
    expect((pvc?.spec as Record<string, unknown>).selector).toBeUndefined();
  });

  it('reports what could not be started as restore errors', async () => {
    const { results } = await restoreMoved(new FakeCluster(), ddHook(['could not create the data download of persistent volume claim app/data: denied']));
    expect(results.toJSON().errors).toEqual({ velero: ['could not create the data download of persistent volume claim app/data: denied'] });
  });
});

describe('resource modifiers during a restore', () => {
  it('apply after the item actions, judged on the backed-up namespace, and the item lands in the mapped one', async () => {
    const { parseResourceModifiers } = await import('../../../../src/server/restore/resource-modifiers.js');
    const modifiers = parseResourceModifiers(
      `version: v1
resourceModifierRules:
- conditions: {groupResource: configmaps, namespaces: [app]}
  mergePatches: [{patchData: '{"data": {"a": "changed"}}'}]
- conditions: {groupResource: deployments.apps, namespaces: [app]}
  patches: [{operation: remove, path: /spec/nothing}]
`,
      'ConfigMap velero/m',
    );
    const cluster = new FakeCluster();
    const results = new ResultsCollector();
    await runRestore(restoreRunOptions({
      restore: newRestore({ name: 'r-mod', spec: { backupName: 'b1', namespaceMapping: { app: 'app2' } } }),
      archive: { items, warnings: [] },
      client: cluster,
      results,
      resourceModifiers: modifiers,
    }));
    const cm = await cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'app2', name: 'settings' });
    expect(cm?.data).toEqual({ a: 'changed' });
    expect(cm?.metadata.namespace).toBe('app2');
    // The failing rule is an error of the item, which is restored without that change.
    expect(results.toJSON().errors.namespaces?.app2?.[0]).toMatch(/^error applying rule #2 of ConfigMap velero\/m to deployments.apps app\/web: /);
    expect(await cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'app2', name: 'web' })).toBeDefined();
  });
});

describe('restoring a Velero-shaped backup with a kept CSI snapshot', () => {
  // The objects as Velero 1.17's CSI actions leave them in the tarball (field and annotation names from its code).
  const vsName = 'velero-data-8xk2p';
  const csiItems: ArchiveItem[] = [
    item('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'db' } }),
    item('persistentvolumeclaims', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'data',
        namespace: 'db',
        uid: 'pvc-uid',
        labels: { 'velero.io/volume-snapshot-name': vsName, 'velero.io/backup-name': 'b1' },
        annotations: { 'velero.io/volume-snapshot-name': vsName, 'backup.velero.io/must-include-additional-items': 'true', 'pv.kubernetes.io/bind-completed': 'yes' },
      },
      spec: { storageClassName: 'csi-sc', volumeName: 'pvc-1111', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Bound' },
    }),
    item('persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-1111' },
      spec: { persistentVolumeReclaimPolicy: 'Delete', csi: { driver: 'hostpath.csi.k8s.io', volumeHandle: 'vol-1' }, claimRef: { namespace: 'db', name: 'data' } },
    }),
    item('volumesnapshots.snapshot.storage.k8s.io', {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: {
        name: vsName,
        namespace: 'db',
        labels: { 'velero.io/backup-name': 'b1' },
        annotations: {
          'velero.io/csi-vsc-deletion-policy': 'Delete',
          'velero.io/csi-volumesnapshot-handle': 'snap-77',
          'velero.io/csi-driver-name': 'hostpath.csi.k8s.io',
          'velero.io/csi-volumesnapshot-restore-size': '1Gi',
          'backup.velero.io/must-include-additional-items': 'true',
        },
      },
      spec: { source: { persistentVolumeClaimName: 'data' }, volumeSnapshotClassName: 'csi-snapclass' },
      status: { boundVolumeSnapshotContentName: 'snapcontent-abc', readyToUse: true, restoreSize: '1Gi' },
    }),
    item('volumesnapshotcontents.snapshot.storage.k8s.io', {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotContent',
      metadata: { name: 'snapcontent-abc', labels: { 'velero.io/backup-name': 'b1' } },
      spec: {
        deletionPolicy: 'Retain',
        driver: 'hostpath.csi.k8s.io',
        source: { volumeHandle: 'vol-1' },
        volumeSnapshotClassName: 'csi-snapclass',
        volumeSnapshotRef: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', namespace: 'db', name: vsName, uid: 'vs-uid', resourceVersion: '42' },
      },
      status: { snapshotHandle: 'snap-77', readyToUse: true, restoreSize: 1073741824 },
    }),
    item('volumesnapshotclasses.snapshot.storage.k8s.io', {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name: 'csi-snapclass', labels: { 'velero.io/csi-volumesnapshot-class': 'true' } },
      driver: 'hostpath.csi.k8s.io',
      deletionPolicy: 'Delete',
    } as UnstructuredObject),
  ];
  const volumeInfos: StoredBackupVolumeInfo[] = [
    { pvName: 'pvc-1111', pvcName: 'data', pvcNamespace: 'db', backupMethod: 'CSISnapshot', snapshotDataMoved: false, pvInfo: { reclaimPolicy: 'Delete', labels: null } },
  ];

  it('brings the claim back from a VolumeSnapshot bound statically to the stored snapshot handle; the PV is not restored', async () => {
    const cluster = new FakeCluster();
    const restore = newRestore({ name: 'r-csi', spec: { backupName: 'b1' } });
    restore.metadata.uid = 'restore-uid';
    const results = new ResultsCollector();
    await runRestore(restoreRunOptions({
      restore,
      archive: { items: csiItems, warnings: [] },
      volumeInfos,
      client: cluster,
      results,
    }));
    expect(results.toJSON()).toEqual({ warnings: {}, errors: {} });
    const { restoredSnapshotName } = await import('../../../../src/server/item-actions/restore-csi-snapshot.js');
    const name = restoredSnapshotName('restore-uid', vsName);
    expect(cluster.created).toEqual([
      'Namespace db',
      'VolumeSnapshotClass csi-snapclass',
      `VolumeSnapshotContent ${name}`,
      `VolumeSnapshot db/${name}`,
      'PersistentVolumeClaim db/data',
    ]);
    const vsc = await cluster.get({ apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotContent', name });
    expect(vsc?.spec).toEqual({
      deletionPolicy: 'Retain',
      driver: 'hostpath.csi.k8s.io',
      source: { snapshotHandle: 'snap-77' },
      volumeSnapshotClassName: 'csi-snapclass',
      volumeSnapshotRef: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', namespace: 'db', name },
    });
    const vs = await cluster.get({ apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', namespace: 'db', name });
    expect(vs?.spec).toEqual({ source: { volumeSnapshotContentName: name }, volumeSnapshotClassName: 'csi-snapclass' });
    const pvc = await cluster.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'db', name: 'data' });
    expect(pvc?.spec).toMatchObject({ dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name } });
    expect((pvc?.spec as { volumeName?: string }).volumeName).toBeUndefined();
  });
});
