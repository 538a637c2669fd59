/**
 * Pods need their PersistentVolumeClaims, their ServiceAccount and their PriorityClass to be recreated on
 * restore, so those are backed up with the pod even when a label selector would not pick them.
 */
import type { BackupItemAction, RelatedItem, UnstructuredObject } from '../../plugins/item-actions/types.js';

interface PodLike {
  spec?: {
    volumes?: { persistentVolumeClaim?: { claimName?: string } }[];
    serviceAccountName?: string;
    priorityClassName?: string;
  };
}

export function podRelatedItems(item: UnstructuredObject): RelatedItem[] {
  const pod = item as unknown as PodLike;
  const namespace = item.metadata.namespace;
  const related: RelatedItem[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    const claim = v.persistentVolumeClaim?.claimName;
    if (claim) related.push({ groupResource: 'persistentvolumeclaims', ...(namespace ? { namespace } : {}), name: claim });
  }
  const sa = pod.spec?.serviceAccountName;
  if (sa) related.push({ groupResource: 'serviceaccounts', ...(namespace ? { namespace } : {}), name: sa });
  const pc = pod.spec?.priorityClassName;
  if (pc) related.push({ groupResource: 'priorityclasses.scheduling.k8s.io', name: pc });
  return related;
}

export const podBackupAction: BackupItemAction = {
  name: 'velero.io/pod',
  appliesTo: () => ({ includedResources: ['pods'] }),
  execute: async (item) => ({ item, additionalItems: podRelatedItems(item) }),
};
