/**
 * `velero.io/change-storage-class`: Velero's restore item action that gives PVCs, PVs and the volume claim templates
 * of StatefulSets another storage class, from the action's ConfigMap (`<old class>: <new class>`; ./plugin-config in
 * src/server/restore). The new class must exist: otherwise the item fails with the reason, as in Velero.
 */
import type { Kube } from '../../kube/client.js';
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

export const CHANGE_STORAGE_CLASS = 'velero.io/change-storage-class';

interface WithClass {
  storageClassName?: string;
}

async function storageClassExists(kube: Kube, name: string): Promise<void> {
  try {
    await kube.custom.getClusterCustomObject({ group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', name });
  } catch (err) {
    throw new Error(`error getting storage class ${name} from API: ${(err as Error).message}`, { cause: err });
  }
}

/** The item with each storage class named in `mapping` replaced; the names of the new classes used. */
export function changeStorageClasses(item: UnstructuredObject, mapping: Record<string, string>): { item: UnstructuredObject; changed: { from: string; to: string }[] } {
  const out = structuredClone(item);
  const changed: { from: string; to: string }[] = [];
  const change = (spec: WithClass | undefined) => {
    const from = spec?.storageClassName;
    const to = from ? mapping[from] : undefined;
    if (spec && from && to) {
      spec.storageClassName = to;
      changed.push({ from, to });
    }
  };
  if (out.kind === 'StatefulSet') {
    const templates = (out.spec as { volumeClaimTemplates?: { spec?: WithClass }[] } | undefined)?.volumeClaimTemplates ?? [];
    for (const t of templates) change(t.spec);
  } else {
    change(out.spec as WithClass | undefined);
  }
  return { item: out, changed };
}

export const changeStorageClassAction: RestoreItemAction = {
  name: CHANGE_STORAGE_CLASS,
  appliesTo: () => ({ includedResources: ['persistentvolumeclaims', 'persistentvolumes', 'statefulsets.apps'] }),
  async execute(item, ctx) {
    const mapping = await ctx.pluginConfig?.(CHANGE_STORAGE_CLASS);
    if (!mapping || !Object.keys(mapping).length) return { item };
    const out = changeStorageClasses(item, mapping);
    for (const c of out.changed) {
      await storageClassExists(ctx.kube, c.to);
      ctx.log.info(`Updating the storage class of ${item.kind} ${item.metadata.namespace ? `${item.metadata.namespace}/` : ''}${item.metadata.name} from ${c.from} to ${c.to}`);
    }
    return { item: out.item };
  },
};
