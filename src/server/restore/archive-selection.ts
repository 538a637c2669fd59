/**
 * What a restore reads of its backup archive (./restorer.ts selects from what is read): the reader reads past the
 * items it cannot take, so a restore of a few namespaces of a big backup holds those namespaces only. Each choice is
 * the restorer's own (`selectItems`), made as early as the item allows: the path decides namespaces and excluded
 * resources; the parsed object decides what needs its kind or labels. What is kept beyond the selection is what the
 * restorer may look up besides it: the Namespace objects of the restored namespaces, and the cluster-scoped items a
 * namespaced item may need (CRDs, the PVs claimed from restored namespaces), which `selectItems` chooses once every
 * item is known, and the snapshot contents of their VolumeSnapshots. Anything else the restore turns out to need (an item action's additional items) is read again from
 * the archive (RestoreRun.lookUp).
 */
import type { Restore } from '../../api/index.js';
import type { ArchiveItem, ArchiveItemRef } from '../archive/reader.js';
import { VOLUME_SNAPSHOT_CONTENTS } from '../csi/snapshot-objects.js';
import { isCrdResource } from './priorities.js';
import { IncludesExcludes, labelsSelected, namespaceFilter, resourceExclusions, resourceFilter, resourceKey } from './filters.js';

export interface ArchiveSelection {
  /** From the path, before the body is read: whether the item may be restored or looked up. */
  select: (ref: ArchiveItemRef) => boolean;
  /** From the parsed item: whether it is held. */
  keep: (item: ArchiveItem) => boolean;
}

/** Whether the Restore restores some namespaces only (then cluster-scoped items follow what they need). */
export function filtersNamespaces(restore: Restore): boolean {
  const inc = restore.spec.includedNamespaces ?? [];
  return (inc.length > 0 && !inc.includes('*')) || (restore.spec.excludedNamespaces ?? []).length > 0;
}

/** Completed pods and jobs, and mirror pods, are not restored (Velero skips them too). */
export function skipReason(item: ArchiveItem): string | undefined {
  const o = item.object;
  if (item.groupResource === 'pods') {
    const phase = (o.status as { phase?: string } | undefined)?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return `pod is ${phase}`;
    if (o.metadata.annotations?.['kubernetes.io/config.mirror']) return 'mirror pod';
  }
  if (item.groupResource === 'jobs.batch') {
    const st = o.status as { completionTime?: string } | undefined;
    if (st?.completionTime) return 'job has completed';
  }
  return undefined;
}

/** Whether the restore takes an item other than a Namespace, namespace filter apart: its resource, labels, state. */
export function itemWanted(restore: Restore): (item: ArchiveItem) => boolean {
  const resFilter = resourceFilter(restore);
  return (item) => resFilter.shouldInclude(resourceKey(item.groupResource, item.object.kind)) && labelsSelected(item.object.metadata.labels, restore) && skipReason(item) === undefined;
}

export function restoreArchiveSelection(restore: Restore): ArchiveSelection {
  const nsFilter: IncludesExcludes = namespaceFilter(restore);
  // An excluded resource is excluded whatever its kind; an included one may need the kind to tell (`Deployment`).
  const excluded = resourceExclusions(restore);
  const wanted = itemWanted(restore);
  const clusterResources = restore.spec.includeClusterResources !== false;
  // Unset with some namespaces: only the CRDs and PVs restored items need (which the path alone cannot tell), and the
  // snapshot contents the CSI action of their VolumeSnapshots brings along (held, so it need not read them again).
  const onlyNeeded = restore.spec.includeClusterResources !== true && clusterResources && filtersNamespaces(restore);
  const maybeNeeded = (item: ArchiveItem) => {
    if (isCrdResource(item.groupResource)) return true;
    const spec = item.object.spec as { claimRef?: { namespace?: string }; volumeSnapshotRef?: { namespace?: string } } | undefined;
    const from = item.groupResource === 'persistentvolumes' ? spec?.claimRef : item.groupResource === VOLUME_SNAPSHOT_CONTENTS ? spec?.volumeSnapshotRef : undefined;
    return from?.namespace !== undefined && nsFilter.shouldInclude(from.namespace);
  };
  return {
    select: (ref) => {
      // Namespace objects are kept whatever the resource filters: restored items' namespaces are created from them.
      if (ref.groupResource === 'namespaces' && ref.namespace === undefined) return nsFilter.shouldInclude(ref.name);
      if (!excluded.shouldInclude(resourceKey(ref.groupResource))) return false;
      return ref.namespace !== undefined ? nsFilter.shouldInclude(ref.namespace) : clusterResources;
    },
    keep: (item) => {
      if (item.groupResource === 'namespaces' && item.namespace === undefined) return true;
      if (!wanted(item)) return false;
      return item.namespace !== undefined || !onlyNeeded || maybeNeeded(item);
    },
  };
}
