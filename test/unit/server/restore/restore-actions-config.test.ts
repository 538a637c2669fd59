import { describe, expect, it } from 'vitest';
import { newBackup, newRestore } from '../../../../src/api/index.js';
import { createLogger } from '../../../../src/base/logger.js';
import type { Kube } from '../../../../src/kube/client.js';
import type { RestoreItemContext, UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import { changeImageNameAction, changeImageNames, renamedImage } from '../../../../src/server/item-actions/restore-change-image-name.js';
import { changeStorageClassAction, changeStorageClasses } from '../../../../src/server/item-actions/restore-change-storage-class.js';
import { pvcRestoreAction } from '../../../../src/server/item-actions/restore-pvc.js';
import { clusterRoleBindingRestoreAction, roleBindingRestoreAction } from '../../../../src/server/item-actions/restore-role-bindings.js';
import { pluginConfigSelector } from '../../../../src/server/restore/plugin-config.js';

const log = createLogger({ level: 'fatal' });

function ctx(opts: { configs?: Record<string, Record<string, string>>; classes?: string[]; nodes?: string[]; mapping?: Record<string, string> } = {}): RestoreItemContext {
  const kube = {
    custom: {
      getClusterCustomObject: async ({ name }: { name: string }) => {
        if (!(opts.classes ?? []).includes(name)) throw new Error(`storageclasses.storage.k8s.io "${name}" not found`);
        return { metadata: { name } };
      },
    },
    core: {
      readNode: async ({ name }: { name: string }) => {
        if (!(opts.nodes ?? []).includes(name)) throw new Error('not found');
        return {};
      },
    },
  } as unknown as Kube;
  return {
    restore: newRestore({ name: 'r', spec: { backupName: 'b', ...(opts.mapping ? { namespaceMapping: opts.mapping } : {}) } }),
    backup: newBackup({ name: 'b' }),
    kube,
    log,
    itemFromBackup: { apiVersion: 'v1', kind: 'X', metadata: { name: 'x' } },
    pluginConfig: async (action) => opts.configs?.[action],
  };
}

describe("restore item actions configured by ConfigMaps (Velero's plugin config)", () => {
  it('finds the ConfigMap by the labels Velero uses', () => {
    expect(pluginConfigSelector('velero.io/change-storage-class')).toBe('velero.io/plugin-config,velero.io/change-storage-class=RestoreItemAction');
  });

  describe('velero.io/change-storage-class', () => {
    const config = { 'velero.io/change-storage-class': { standard: 'fast', gp2: 'gp3' } };
    it('changes PVCs, PVs and StatefulSet claim templates; a class without mapping stays', async () => {
      const pvc: UnstructuredObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'd', namespace: 'a' }, spec: { storageClassName: 'standard' } };
      expect((await changeStorageClassAction.execute(pvc, ctx({ configs: config, classes: ['fast'] }))).item.spec).toEqual({ storageClassName: 'fast' });
      const pv: UnstructuredObject = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'p' }, spec: { storageClassName: 'other' } };
      expect((await changeStorageClassAction.execute(pv, ctx({ configs: config }))).item.spec).toEqual({ storageClassName: 'other' });
      const sts: UnstructuredObject = {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 's', namespace: 'a' },
        spec: { volumeClaimTemplates: [{ spec: { storageClassName: 'gp2' } }, { spec: {} }] },
      };
      expect(changeStorageClasses(sts, config['velero.io/change-storage-class']).item.spec).toEqual({ volumeClaimTemplates: [{ spec: { storageClassName: 'gp3' } }, { spec: {} }] });
    });

    it('the new class must exist (the item fails, as in Velero); no ConfigMap changes nothing', async () => {
      const pvc: UnstructuredObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'd', namespace: 'a' }, spec: { storageClassName: 'standard' } };
      await expect(changeStorageClassAction.execute(pvc, ctx({ configs: config, classes: [] }))).rejects.toThrow(/error getting storage class fast from API/);
      expect((await changeStorageClassAction.execute(pvc, ctx())).item).toBe(pvc);
    });
  });

  describe('velero.io/change-image-name', () => {
    const mapping = { case1: '1.1.1.1:5000,2.2.2.2:3000', case2: 'abc:test,edf:test', bad: 'no-delimiter' };
    it("Velero's '<old part>,<new part>' rules", () => {
      expect(renamedImage('1.1.1.1:5000/abc:test', mapping)).toBe('2.2.2.2:3000/abc:test');
      expect(renamedImage('docker.io/abc:test', mapping)).toBe('docker.io/edf:test');
      expect(renamedImage('nginx', mapping)).toBeUndefined();
    });

    it('containers and init containers of pods, pod templates and cron jobs', async () => {
      const pod: UnstructuredObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a' }, spec: { containers: [{ name: 'c', image: 'abc:test' }], initContainers: [{ name: 'i', image: '1.1.1.1:5000/init' }] } };
      const out = await changeImageNameAction.execute(pod, ctx({ configs: { 'velero.io/change-image-name': mapping } }));
      expect(out.item.spec).toEqual({ containers: [{ name: 'c', image: 'edf:test' }], initContainers: [{ name: 'i', image: '2.2.2.2:3000/init' }] });
      const deploy: UnstructuredObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'abc:test' }] } } } };
      expect(changeImageNames(deploy, mapping).changed).toEqual([{ from: 'abc:test', to: 'edf:test' }]);
      const cron: UnstructuredObject = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c' }, spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'abc:test' }] } } } } } };
      expect(changeImageNames(cron, mapping).changed).toHaveLength(1);
    });
  });

  describe('velero.io/change-pvc-node-selector', () => {
    const claim = (): UnstructuredObject => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'd', namespace: 'a', annotations: { 'volume.kubernetes.io/selected-node': 'old-node', 'pv.kubernetes.io/bind-completed': 'yes', 'velero.io/volume-snapshot-name': 'vs', keep: 'me' } },
      spec: {},
    });
    it('maps the selected node; without a mapping it is dropped; the old binding annotations always go', async () => {
      const mapped = await pvcRestoreAction.execute(claim(), ctx({ configs: { 'velero.io/change-pvc-node-selector': { 'old-node': 'new-node' } }, nodes: ['new-node'] }));
      expect(mapped.item.metadata.annotations).toEqual({ 'volume.kubernetes.io/selected-node': 'new-node', keep: 'me' });
      const dropped = await pvcRestoreAction.execute(claim(), ctx());
      expect(dropped.item.metadata.annotations).toEqual({ keep: 'me' });
      // A mapped node that does not exist is still set (Velero only warns).
      const missing = await pvcRestoreAction.execute(claim(), ctx({ configs: { 'velero.io/change-pvc-node-selector': { 'old-node': 'ghost' } } }));
      expect(missing.item.metadata.annotations?.['volume.kubernetes.io/selected-node']).toBe('ghost');
    });
  });

  describe('role bindings with --namespace-mappings', () => {
    it('subjects in a mapped namespace follow the mapping, in RoleBindings and ClusterRoleBindings', async () => {
      const binding = (kind: string): UnstructuredObject => ({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind,
        metadata: { name: 'b' },
        subjects: [
          { kind: 'ServiceAccount', name: 'web', namespace: 'shop' },
          { kind: 'ServiceAccount', name: 'ops', namespace: 'tools' },
          { kind: 'User', name: 'jane' },
        ],
      });
      const c = ctx({ mapping: { shop: 'shop-copy' } });
      for (const [action, kind] of [[roleBindingRestoreAction, 'RoleBinding'], [clusterRoleBindingRestoreAction, 'ClusterRoleBinding']] as const) {
        expect((await action.execute(binding(kind), c)).item.subjects).toEqual([
          { kind: 'ServiceAccount', name: 'web', namespace: 'shop-copy' },
          { kind: 'ServiceAccount', name: 'ops', namespace: 'tools' },
          { kind: 'User', name: 'jane' },
        ]);
      }
      const unmapped = binding('RoleBinding');
      expect((await roleBindingRestoreAction.execute(unmapped, ctx())).item).toBe(unmapped);
    });
  });
});
