/**
 * `velero.io/init-restore-hook`: init containers a restore adds to the pods it restores, as Velero does:
 *   - from the pod's annotations `init.hook.restore.velero.io/container-image`, `/container-name` (default
 *     `velero-restore-init-<8 hex>`, derived here from the restore and the pod so a restarted restore makes the same
 *     name) and `/command` (a JSON array is the argv, anything else one argument);
 *   - otherwise from every `spec.hooks.resources[]` entry matching the pod (namespaces after mapping, label selector;
 *     these hooks apply to pods only): the containers of its `postHooks[].init.initContainers`, each of which must
 *     have a name, an image and a command;
 *   - placed after cairn's `restore-wait` container (so they see the restored volume data) and before the pod's own
 *     init containers.
 * The init hooks' `timeout` (field and annotation) is not acted on, as in Velero: it becomes a warning in the
 * results rather than being silently ignored. A hook init container that is not valid fails the pod's restore.
 */
import { createHash } from 'node:crypto';
import { Annotations, matchesLabelSelector, type LabelSelectorLike, type RestoreResourceHookSpec } from '../../api/index.js';
import { RESTORE_WAIT_CONTAINER } from '../podvolume/restore-init-container.js';
import { IncludesExcludes } from '../backup/filters.js';
import { commandFromAnnotation } from '../hooks/backup-hooks.js';
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

interface Container {
  name?: unknown;
  image?: unknown;
  command?: unknown;
  [key: string]: unknown;
}

/** Whether a restore hook entry applies to a pod restored into `namespace` with `labels` (Velero's selector). */
export function restoreHookApplies(spec: RestoreResourceHookSpec, namespace: string, labels: Record<string, string> | undefined): boolean {
  if (!new IncludesExcludes(spec.includedNamespaces, spec.excludedNamespaces).shouldInclude(namespace)) return false;
  if (spec.labelSelector && !matchesLabelSelector(labels, spec.labelSelector as LabelSelectorLike)) return false;
  return true;
}

export interface InitHookResult {
  initContainers: Container[];
  warnings: string[];
}

/** The hook init containers for a pod, or throws naming what is wrong. `namespace` is the restore's target one. */
export function initHookContainers(opts: { pod: UnstructuredObject; namespace: string; hooks: readonly RestoreResourceHookSpec[]; restoreUid: string }): InitHookResult {
  const annotations = opts.pod.metadata.annotations ?? {};
  const where = `pod ${opts.namespace}/${opts.pod.metadata.name}`;
  const image = annotations[Annotations.InitRestoreHookContainerImage];
  if (image) {
    const warnings = annotations[Annotations.InitRestoreHookTimeout]
      ? [`${where}: annotation ${Annotations.InitRestoreHookTimeout} is not acted on (as in Velero): the init hook container runs as long as it takes`]
      : [];
    const generated = `velero-restore-init-${createHash('sha256').update(`${opts.restoreUid}/${opts.namespace}/${opts.pod.metadata.name}`).digest('hex').slice(0, 8)}`;
    const command = annotations[Annotations.InitRestoreHookCommand];
    return {
      initContainers: [{ name: annotations[Annotations.InitRestoreHookContainerName] || generated, image, ...(command ? { command: commandFromAnnotation(command) } : {}) }],
      warnings,
    };
  }
  const out: InitHookResult = { initContainers: [], warnings: [] };
  for (const [i, spec] of opts.hooks.entries()) {
    if (!restoreHookApplies(spec, opts.namespace, opts.pod.metadata.labels)) continue;
    for (const [j, hook] of (spec.postHooks ?? []).entries()) {
      if (!hook.init) continue;
      const field = `spec.hooks.resources[${i}].postHooks[${j}].init`;
      if (hook.init.timeout) out.warnings.push(`${where}: ${field}.timeout is not acted on (as in Velero): the init hook containers run as long as they take`);
      for (const [k, raw] of (hook.init.initContainers ?? []).entries()) {
        const c = raw as Container;
        const missing = (['name', 'image', 'command'] as const).filter((f) => (f === 'command' ? !Array.isArray(c.command) || c.command.length === 0 : typeof c[f] !== 'string' || !c[f]));
        if (missing.length) throw new Error(`invalid InitContainer in restore hook ${field}.initContainers[${k}]: it has no ${missing.join(', ')} (name, image and command are required)`);
        out.initContainers.push({ ...c });
      }
    }
  }
  return out;
}

export const initRestoreHookAction: RestoreItemAction = {
  name: 'velero.io/init-restore-hook',
  appliesTo: () => ({ includedResources: ['pods'] }),
  async execute(item, ctx) {
    const hooks = ctx.restore.spec.hooks?.resources ?? [];
    const namespace = item.metadata.namespace ?? '';
    const result = initHookContainers({ pod: item, namespace, hooks, restoreUid: ctx.restore.metadata.uid ?? '' });
    for (const w of result.warnings) ctx.warn?.(w);
    if (!result.initContainers.length) return { item };
    const spec = { ...((item.spec as Record<string, unknown> | undefined) ?? {}) };
    const existing = (spec.initContainers as Container[] | undefined) ?? [];
    const first = existing[0]?.name === RESTORE_WAIT_CONTAINER ? [existing[0]] : [];
    spec.initContainers = [...first, ...result.initContainers, ...existing.slice(first.length)];
    ctx.log.info(`Added ${result.initContainers.length} init container(s) from restore hooks to pod ${namespace}/${item.metadata.name}`);
    return { item: { ...item, spec } };
  },
};
