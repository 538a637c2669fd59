import { describe, expect, it } from 'vitest';
import { newBackup, newRestore } from '../../../../src/api/index.js';
import type { Kube } from '../../../../src/kube/client.js';
import { createLogger } from '../../../../src/base/logger.js';
import { registerBuiltinRestoreActions } from '../../../../src/server/item-actions/builtin.js';
import { ItemActionRegistry } from '../../../../src/plugins/item-actions/registry.js';
import type { UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';

const registry = registerBuiltinRestoreActions(new ItemActionRegistry());

async function run(gr: string, item: UnstructuredObject, spec: Record<string, unknown> = {}): Promise<UnstructuredObject> {
  const restore = newRestore({ name: 'r', spec: { backupName: 'b', ...spec } });
  const ctx = { restore, backup: newBackup({ name: 'b' }), kube: {} as Kube, log: createLogger({ level: 'fatal' }), itemFromBackup: item };
  let out = item;
  for (const a of registry.restoreActionsFor(gr, item.metadata.namespace)) out = (await a.execute(out, ctx)).item;
  return out;
}

describe('built-in restore item actions', () => {
  it('registers one action per kind it cleans', () => {
    expect(registry.names.restore).toEqual([
      'velero.io/pod',
      'velero.io/pod-volume-restore',
      'velero.io/init-restore-hook',
      'velero.io/service',
      'velero.io/pvc',
      'velero.io/csi-pvc-restorer',
      'velero.io/csi-volumesnapshot-restorer',
      'velero.io/csi-volumesnapshotcontent-restorer',
      'velero.io/csi-volumesnapshotclass-restorer',
      'cairn.io/pv-claim-ref',
      'velero.io/service-account',
      'velero.io/secret',
      'velero.io/job',
      'velero.io/change-storage-class',
      'velero.io/change-image-name',
      'velero.io/role-bindings',
      'velero.io/cluster-role-bindings',
    ]);
    expect(registry.restoreActionsFor('configmaps')).toEqual([]);
  });

  it('pods: drops the node name, priority and the injected service-account token volume and mounts', async () => {
    const pod = await run('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'app' },
      spec: {
        nodeName: 'node-1',
        priority: 1000,
        priorityClassName: 'high',
        serviceAccountName: 'worker',
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }, { name: 'kube-api-access-x1', projected: {} }, { name: 'tok', secret: { secretName: 'worker-token-abcde' } }],
        containers: [{ name: 'c', volumeMounts: [{ name: 'data', mountPath: '/d' }, { name: 'kube-api-access-x1', mountPath: '/var/run/secrets' }] }],
        initContainers: [{ name: 'i', volumeMounts: [{ name: 'tok', mountPath: '/t' }] }],
      },
    });
    expect(pod.spec).toEqual({
      priorityClassName: 'high',
      serviceAccountName: 'worker',
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      containers: [{ name: 'c', volumeMounts: [{ name: 'data', mountPath: '/d' }] }],
      initContainers: [{ name: 'i' }],
    });
  });

  it('services: drops cluster IPs and node ports, keeps headless and, when asked, node ports', async () => {
    const svc = (clusterIP: string): UnstructuredObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', namespace: 'app' },
      spec: { type: 'NodePort', clusterIP, clusterIPs: [clusterIP], ports: [{ port: 80, nodePort: 30080 }], healthCheckNodePort: 31000 },
    });
    expect((await run('services', svc('10.0.0.7'))).spec).toEqual({ type: 'NodePort', ports: [{ port: 80 }] });
    expect((await run('services', svc('None'))).spec).toMatchObject({ clusterIP: 'None', clusterIPs: ['None'] });
    expect((await run('services', svc('10.0.0.7'), { preserveNodePorts: true })).spec).toEqual({
      type: 'NodePort',
      ports: [{ port: 80, nodePort: 30080 }],
      healthCheckNodePort: 31000,
    });
  });

  it('claims: drops binding, provisioner and selected-node annotations, keeps the others', async () => {
    const pvc = await run('persistentvolumeclaims', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'data',
        namespace: 'app',
        annotations: {
          'pv.kubernetes.io/bind-completed': 'yes',
          'pv.kubernetes.io/bound-by-controller': 'yes',
          'volume.kubernetes.io/selected-node': 'node-1',
          'volume.kubernetes.io/storage-provisioner': 'cairn.local/local-path',
          'app.example/owner': 'team-a',
        },
      },
      spec: { volumeName: 'pvc-1' },
    });
    // Velero's list: the provisioner annotations go too (the new volume is provisioned by whoever serves the class).
    expect(pvc.metadata.annotations).toEqual({ 'app.example/owner': 'team-a' });
    expect(pvc.spec).toEqual({ volumeName: 'pvc-1' });
  });

  it('volumes: the claim reference loses uid and version and follows the namespace mapping', async () => {
    const pv = await run(
      'persistentvolumes',
      {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'pv-1', annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } },
        spec: { claimRef: { kind: 'PersistentVolumeClaim', namespace: 'app', name: 'data', uid: 'u', resourceVersion: '9' } },
      },
      { namespaceMapping: { app: 'app-copy' } },
    );
    expect(pv.metadata.annotations).toBeUndefined();
    expect(pv.spec).toEqual({ claimRef: { kind: 'PersistentVolumeClaim', namespace: 'app-copy', name: 'data' } });
  });

  it('service accounts: drops the generated token secrets', async () => {
    const sa = await run('serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'worker', namespace: 'app' },
      secrets: [{ name: 'worker-token-abcde' }, { name: 'extra' }],
    });
    expect(sa.secrets).toEqual([{ name: 'extra' }]);
  });

  it('service-account token secrets: drops what the old cluster issued so a fresh token is issued', async () => {
    const secret = (type: string): UnstructuredObject => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'bot-token', namespace: 'app', annotations: { 'kubernetes.io/service-account.name': 'bot', 'kubernetes.io/service-account.uid': 'old' } },
      type,
      data: { token: 'dA==', 'ca.crt': 'Yw==', namespace: 'YXBw', extra: 'eA==' },
    });
    const restored = await run('secrets', secret('kubernetes.io/service-account-token'));
    expect(restored.metadata.annotations).toEqual({ 'kubernetes.io/service-account.name': 'bot' });
    expect(restored.data).toEqual({ extra: 'eA==' });
    expect(await run('secrets', secret('Opaque'))).toEqual(secret('Opaque'));
  });

  it('jobs: drops the old controller uid from selector and template', async () => {
    const job = await run('jobs.batch', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j', namespace: 'app' },
      spec: {
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u-1' } },
        template: { metadata: { labels: { 'controller-uid': 'u-1', 'batch.kubernetes.io/controller-uid': 'u-1', 'job-name': 'j' } }, spec: {} },
      },
    });
    expect(job.spec).toEqual({ template: { metadata: { labels: { 'job-name': 'j' } }, spec: {} } });
  });
});
