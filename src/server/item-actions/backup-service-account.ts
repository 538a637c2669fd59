/**
 * A ServiceAccount brings the ClusterRoleBindings that name it and their ClusterRoles, so its permissions come
 * back with it. The bindings are listed once per backup, not once per ServiceAccount.
 */
import type { V1ClusterRoleBinding } from '@kubernetes/client-node';
import { call } from '../../kube/client.js';
import { oncePerBackup } from './per-backup.js';
import type { BackupItemAction, RelatedItem, UnstructuredObject } from '../../plugins/item-actions/types.js';

export function serviceAccountRelatedItems(sa: UnstructuredObject, bindings: readonly V1ClusterRoleBinding[]): RelatedItem[] {
  const related: RelatedItem[] = [];
  for (const b of bindings) {
    const names = (b.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === sa.metadata.name && s.namespace === sa.metadata.namespace);
    if (!names || !b.metadata?.name) continue;
    related.push({ groupResource: 'clusterrolebindings.rbac.authorization.k8s.io', name: b.metadata.name });
    if (b.roleRef.kind === 'ClusterRole') related.push({ groupResource: 'clusterroles.rbac.authorization.k8s.io', name: b.roleRef.name });
  }
  return related;
}

export function createServiceAccountBackupAction(): BackupItemAction {
  const bindingsFor = oncePerBackup((ctx) => call(ctx.kube, 'list clusterrolebindings', async () => (await ctx.kube.rbac.listClusterRoleBinding()).items));
  return {
    name: 'velero.io/service-account',
    appliesTo: () => ({ includedResources: ['serviceaccounts'] }),
    execute: async (item, ctx) => ({ item, additionalItems: serviceAccountRelatedItems(item, await bindingsFor(ctx)) }),
  };
}
