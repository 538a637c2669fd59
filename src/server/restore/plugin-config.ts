/**
 * The configuration of restore item actions, as Velero's plugins find it: a ConfigMap in the install namespace
 * labelled `velero.io/plugin-config` (any value) and `<action name>: RestoreItemAction`, e.g.
 * `velero.io/change-storage-class: RestoreItemAction`. Read once per restore and action; two ConfigMaps for one
 * action are an error (Velero's message).
 */
import type { Kube } from '../../kube/client.js';

export const PLUGIN_CONFIG_LABEL = 'velero.io/plugin-config';
export const RESTORE_ITEM_ACTION_KIND = 'RestoreItemAction';

export function pluginConfigSelector(action: string): string {
  return `${PLUGIN_CONFIG_LABEL},${action}=${RESTORE_ITEM_ACTION_KIND}`;
}

/** A reader of action configurations for one restore, each ConfigMap listed once. */
export function pluginConfigReader(kube: Kube, namespace: string): (action: string) => Promise<Record<string, string> | undefined> {
  const cache = new Map<string, Promise<Record<string, string> | undefined>>();
  return (action) => {
    let found = cache.get(action);
    if (!found) {
      const selector = pluginConfigSelector(action);
      found = kube.core.listNamespacedConfigMap({ namespace, labelSelector: selector }).then((list) => {
        const items = list.items ?? [];
        if (items.length > 1) throw new Error(`found more than one ConfigMap matching label selector "${selector}": [${items.map((i) => i.metadata?.name ?? '').join(' ')}]`);
        return items[0] ? (items[0].data ?? {}) : undefined;
      });
      cache.set(action, found);
    }
    return found;
  };
}
