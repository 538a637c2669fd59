/**
 * A custom resource brings its CustomResourceDefinition, so a restore into an empty cluster can create the CR.
 * Whether the CRD is then taken follows the backup's cluster-resource rules (not when they are excluded). CRDs are
 * listed once per backup and looked up by group and kind.
 */
import { call } from '../../kube/client.js';
import { oncePerBackup } from './per-backup.js';
import type { BackupItemAction } from '../../plugins/item-actions/types.js';

export const CRD_GROUP_RESOURCE = 'customresourcedefinitions.apiextensions.k8s.io';

export function createCustomResourceBackupAction(): BackupItemAction {
  const crdsFor = oncePerBackup((ctx) =>
    call(ctx.kube, 'list customresourcedefinitions', async () => {
      const byGroupKind = new Map<string, string>();
      for (const crd of (await ctx.kube.apiext.listCustomResourceDefinition()).items) {
        if (crd.metadata?.name) byGroupKind.set(`${crd.spec.group}/${crd.spec.names.kind}`, crd.metadata.name);
      }
      return byGroupKind;
    }),
  );
  return {
    name: 'cairn.io/custom-resource-definition',
    appliesTo: () => ({ includedResources: ['*'] }),
    execute: async (item, ctx) => {
      const slash = item.apiVersion.indexOf('/');
      // The core group and the built-in *.k8s.io groups are never served by CRDs: skip the lookup.
      if (slash < 0) return { item, additionalItems: [] };
      const group = item.apiVersion.slice(0, slash);
      if (group === 'apps' || group === 'batch' || group === 'policy' || group === 'autoscaling' || group.endsWith('.k8s.io')) {
        return { item, additionalItems: [] };
      }
      const crd = (await crdsFor(ctx)).get(`${group}/${item.kind}`);
      return { item, additionalItems: crd ? [{ groupResource: CRD_GROUP_RESOURCE, name: crd }] : [] };
    },
  };
}
