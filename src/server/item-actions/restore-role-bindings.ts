/**
 * `velero.io/role-bindings` and `velero.io/cluster-role-bindings`: with a namespace mapping, the subjects of restored
 * RoleBindings and ClusterRoleBindings that name a mapped namespace (a ServiceAccount there) name the new one, as
 * Velero does, so the restored workload keeps its permissions.
 */
import type { Restore } from '../../api/index.js';
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

export function remapSubjects(item: UnstructuredObject, restore: Restore): UnstructuredObject {
  const mapping = restore.spec.namespaceMapping ?? {};
  if (!Object.keys(mapping).length) return item;
  const out = structuredClone(item);
  for (const s of (out.subjects as { namespace?: string }[] | undefined) ?? []) {
    const to = s.namespace ? mapping[s.namespace] : undefined;
    if (to) s.namespace = to;
  }
  return out;
}

export const roleBindingRestoreAction: RestoreItemAction = {
  name: 'velero.io/role-bindings',
  appliesTo: () => ({ includedResources: ['rolebindings.rbac.authorization.k8s.io'] }),
  execute: async (item, ctx) => ({ item: remapSubjects(item, ctx.restore) }),
};

export const clusterRoleBindingRestoreAction: RestoreItemAction = {
  name: 'velero.io/cluster-role-bindings',
  appliesTo: () => ({ includedResources: ['clusterrolebindings.rbac.authorization.k8s.io'] }),
  execute: async (item, ctx) => ({ item: remapSubjects(item, ctx.restore) }),
};
