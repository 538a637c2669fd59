/**
 * `velero.io/change-image-name`: Velero's restore item action that rewrites container images of workloads from the
 * action's ConfigMap. Each value is `<old part>,<new part>`; an image containing `<old part>` gets it replaced (every
 * occurrence) by `<new part>`: `"case1": "1.1.1.1:5000,2.2.2.2:3000"` moves a registry, `"case2": "abc:test,edf:test"`
 * renames an image. Containers and init containers of Pods, of pod templates (Deployments, StatefulSets,
 * DaemonSets, ReplicaSets, ReplicationControllers, Jobs) and of CronJobs' job templates. Values are tried in key
 * order (Velero's map order is random); the first that applies wins.
 */
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

export const CHANGE_IMAGE_NAME = 'velero.io/change-image-name';
const DELIMITER = ',';

/** The new image name under the mapping, or undefined when no rule applies. */
export function renamedImage(image: string, mapping: Record<string, string>): string | undefined {
  if (!image) return undefined;
  for (const key of Object.keys(mapping).sort()) {
    const row = mapping[key] ?? '';
    const at = row.indexOf(DELIMITER);
    if (at < 0) continue;
    const oldPart = row.slice(0, at).trim();
    const newPart = row.slice(at + DELIMITER.length).trim();
    if (!newPart || !image.includes(oldPart)) continue;
    return image.split(oldPart).join(newPart);
  }
  return undefined;
}

function podSpecOf(item: UnstructuredObject): Record<string, unknown> | undefined {
  const spec = item.spec as Record<string, unknown> | undefined;
  if (item.kind === 'Pod') return spec;
  if (item.kind === 'CronJob') return ((spec?.jobTemplate as { spec?: { template?: { spec?: Record<string, unknown> } } } | undefined)?.spec?.template?.spec);
  return (spec?.template as { spec?: Record<string, unknown> } | undefined)?.spec;
}

export function changeImageNames(item: UnstructuredObject, mapping: Record<string, string>): { item: UnstructuredObject; changed: { from: string; to: string }[] } {
  const out = structuredClone(item);
  const changed: { from: string; to: string }[] = [];
  const spec = podSpecOf(out);
  for (const field of ['containers', 'initContainers']) {
    for (const c of (spec?.[field] as { image?: string }[] | undefined) ?? []) {
      const to = c.image ? renamedImage(c.image, mapping) : undefined;
      if (c.image && to) {
        changed.push({ from: c.image, to });
        c.image = to;
      }
    }
  }
  return { item: out, changed };
}

export const changeImageNameAction: RestoreItemAction = {
  name: CHANGE_IMAGE_NAME,
  appliesTo: () => ({ includedResources: ['deployments.apps', 'statefulsets.apps', 'daemonsets.apps', 'replicasets.apps', 'replicationcontrollers', 'jobs.batch', 'cronjobs.batch', 'pods'] }),
  async execute(item, ctx) {
    const mapping = await ctx.pluginConfig?.(CHANGE_IMAGE_NAME);
    if (!mapping || !Object.keys(mapping).length) return { item };
    const out = changeImageNames(item, mapping);
    for (const c of out.changed) ctx.log.info(`Updating an image of ${item.kind} ${item.metadata.namespace ?? ''}/${item.metadata.name} from ${c.from} to ${c.to}`);
    return { item: out.item };
  },
};
