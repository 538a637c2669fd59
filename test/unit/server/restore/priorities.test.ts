import { describe, expect, it } from 'vitest';
import { HIGH_PRIORITIES, orderGroupResources } from '../../../../src/server/restore/priorities.js';

describe('restore priority order', () => {
  it.each([
    {
      name: 'CRDs and namespaces first, then the high list in its order',
      present: ['services', 'configmaps', 'namespaces', 'customresourcedefinitions.apiextensions.k8s.io', 'pods', 'secrets'],
      want: ['customresourcedefinitions.apiextensions.k8s.io', 'namespaces', 'secrets', 'configmaps', 'pods', 'services'],
    },
    {
      name: 'volumes before claims before pods; storage classes before volumes',
      present: ['pods', 'persistentvolumeclaims', 'persistentvolumes', 'storageclasses.storage.k8s.io'],
      want: ['storageclasses.storage.k8s.io', 'persistentvolumes', 'persistentvolumeclaims', 'pods'],
    },
    {
      name: 'RBAC in Velero 1.17.2 order around service accounts',
      present: ['rolebindings.rbac.authorization.k8s.io', 'serviceaccounts', 'roles.rbac.authorization.k8s.io', 'clusterroles.rbac.authorization.k8s.io', 'clusterrolebindings.rbac.authorization.k8s.io'],
      want: ['clusterroles.rbac.authorization.k8s.io', 'roles.rbac.authorization.k8s.io', 'serviceaccounts', 'clusterrolebindings.rbac.authorization.k8s.io', 'rolebindings.rbac.authorization.k8s.io'],
    },
    {
      name: 'unlisted resources in the middle, alphabetically, low priorities last',
      present: ['clusters.cluster.x-k8s.io', 'statefulsets.apps', 'deployments.apps', 'widgets.example.com', 'replicasets.apps', 'endpoints'],
      want: ['replicasets.apps', 'endpoints', 'deployments.apps', 'statefulsets.apps', 'widgets.example.com', 'clusters.cluster.x-k8s.io'],
    },
    { name: 'each resource once', present: ['pods', 'pods', 'jobs.batch', 'jobs.batch'], want: ['pods', 'jobs.batch'] },
    { name: 'nothing in, nothing out', present: [], want: [] },
  ])('$name', ({ present, want }) => {
    expect(orderGroupResources(present)).toEqual(want);
  });

  it('keeps Velero\'s high-priority list verbatim, including its singular volumesnapshotclass entry', () => {
    expect(HIGH_PRIORITIES.slice(0, 3)).toEqual(['customresourcedefinitions', 'namespaces', 'storageclasses']);
    expect(HIGH_PRIORITIES).toContain('volumesnapshotclass.snapshot.storage.k8s.io');
    expect(HIGH_PRIORITIES.at(-1)).toBe('services');
    expect(HIGH_PRIORITIES).toHaveLength(23);
  });
});
