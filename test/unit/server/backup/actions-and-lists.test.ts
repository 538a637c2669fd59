import { describe, expect, it } from 'vitest';
import { podRelatedItems } from '../../../../src/server/item-actions/backup-pod.js';
import { pvBackupAction } from '../../../../src/server/item-actions/backup-pv.js';
import { pvcBackupAction } from '../../../../src/server/item-actions/backup-pvc.js';
import { serviceAccountRelatedItems } from '../../../../src/server/item-actions/backup-service-account.js';
import { registerBuiltinActions } from '../../../../src/server/item-actions/builtin.js';
import { ItemActionRegistry } from '../../../../src/plugins/item-actions/registry.js';
import type { BackupItemContext, UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import { BackedUpItems } from '../../../../src/server/backup/resource-list.js';
import { BackupVolumeInfoCollector } from '../../../../src/server/backup/volume-info-collector.js';

const obj = (kind: string, name: string, namespace: string | undefined, rest: Record<string, unknown> = {}): UnstructuredObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
  ...rest,
});
const ctx = {} as BackupItemContext;

describe('built-in backup item actions', () => {
  it('registers backup and restore actions side by side', () => {
    const names = registerBuiltinActions(new ItemActionRegistry()).names;
    expect(names.backup).toEqual(['velero.io/pod', 'velero.io/pv', 'cairn.io/pv-claim', 'velero.io/service-account', 'cairn.io/custom-resource-definition']);
    expect(names.restore.length).toBeGreaterThan(0);
  });

  it('pod → its PVCs, service account and priority class', () => {
    const pod = obj('Pod', 'p', 'app', {
      spec: { serviceAccountName: 'sa', priorityClassName: 'high', volumes: [{ name: 'a', persistentVolumeClaim: { claimName: 'c1' } }, { name: 'b', emptyDir: {} }] },
    });
    expect(podRelatedItems(pod)).toEqual([
      { groupResource: 'persistentvolumeclaims', namespace: 'app', name: 'c1' },
      { groupResource: 'serviceaccounts', namespace: 'app', name: 'sa' },
      { groupResource: 'priorityclasses.scheduling.k8s.io', name: 'high' },
    ]);
  });

  it('bound PVC → its PV; unbound PVC → nothing', async () => {
    expect((await pvcBackupAction.execute(obj('PersistentVolumeClaim', 'c', 'app', { spec: { volumeName: 'pv1' } }), ctx)).additionalItems).toEqual([
      { groupResource: 'persistentvolumes', name: 'pv1' },
    ]);
    expect((await pvcBackupAction.execute(obj('PersistentVolumeClaim', 'c', 'app', { spec: {} }), ctx)).additionalItems).toEqual([]);
  });

  it('claimed PV → its PVC', async () => {
    const pv = obj('PersistentVolume', 'pv1', undefined, { spec: { claimRef: { name: 'c', namespace: 'app' } } });
    expect((await pvBackupAction.execute(pv, ctx)).additionalItems).toEqual([{ groupResource: 'persistentvolumeclaims', namespace: 'app', name: 'c' }]);
  });

  it('service account → the cluster role bindings naming it and their cluster roles', () => {
    const sa = obj('ServiceAccount', 'web', 'app');
    const related = serviceAccountRelatedItems(sa, [
      { metadata: { name: 'b1' }, subjects: [{ kind: 'ServiceAccount', name: 'web', namespace: 'app' }], roleRef: { kind: 'ClusterRole', name: 'r1', apiGroup: '' } },
      { metadata: { name: 'b2' }, subjects: [{ kind: 'ServiceAccount', name: 'web', namespace: 'other' }], roleRef: { kind: 'ClusterRole', name: 'r2', apiGroup: '' } },
    ]);
    expect(related).toEqual([
      { groupResource: 'clusterrolebindings.rbac.authorization.k8s.io', name: 'b1' },
      { groupResource: 'clusterroles.rbac.authorization.k8s.io', name: 'r1' },
    ]);
  });
});

describe('resource list and volume info files', () => {
  it('lists items by apiVersion/Kind, sorted, cluster items without namespace', () => {
    const items = new BackedUpItems();
    items.record('v1', 'Pod', 'b', 'z');
    items.record('v1', 'Pod', 'a', 'y');
    items.record('apps/v1', 'Deployment', 'a', 'd');
    items.record('v1', 'PersistentVolume', undefined, 'pv');
    expect(JSON.stringify(items.toResourceList())).toBe('{"apps/v1/Deployment":["a/d"],"v1/PersistentVolume":["pv"],"v1/Pod":["a/y","b/z"]}');
  });

  it('claims an item once', () => {
    const items = new BackedUpItems();
    expect(items.claim('pods', 'a', 'p')).toBe(true);
    expect(items.claim('pods', 'a', 'p')).toBe(false);
    expect(items.has('pods', 'a', 'p')).toBe(true);
  });

  it('records each PV once as skipped, with the always-present fields', () => {
    const v = new BackupVolumeInfoCollector();
    const pv = { metadata: { name: 'pv1', labels: { a: 'b' } }, spec: { persistentVolumeReclaimPolicy: 'Retain' } };
    v.addSkippedPv(pv);
    v.addSkippedPv(pv);
    const [entry, ...rest] = v.toJSON();
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({ pvName: 'pv1', snapshotDataMoved: false, preserveLocalSnapshot: false, skipped: true, pvInfo: { reclaimPolicy: 'Retain', labels: { a: 'b' } } });
    expect(entry).not.toHaveProperty('pvcName');
  });
});
