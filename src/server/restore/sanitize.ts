/**
 * What is taken off every object before it is created again: fields the API server sets (identity, versions,
 * timestamps, managed fields), owner references (the owners get new UIDs; controllers re-adopt by selector), and
 * `status` unless the Restore asks for it. Kind-specific clean-up (cluster IPs, node names, binding annotations)
 * lives in the built-in restore item actions.
 */
import { Annotations, Labels, labelValue, type Restore } from '../../api/index.js';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import { IncludesExcludes, resourceEntryMatches } from './filters.js';

export const SERVER_SET_METADATA: readonly string[] = [
  'generateName',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'ownerReferences',
  'managedFields',
];

/** A copy without server-set metadata, and without status unless `keepStatus`. */
export function resetMetadataAndStatus(obj: UnstructuredObject, opts: { keepStatus?: boolean } = {}): UnstructuredObject {
  const copy = structuredClone(obj);
  for (const k of SERVER_SET_METADATA) delete copy.metadata[k];
  if (!opts.keepStatus) delete copy.status;
  return copy;
}

/** Whether this item's status is restored: the item's `velero.io/restore-status` annotation, else `spec.restoreStatus`. */
export function shouldRestoreStatus(restore: Restore, groupResource: string, item: UnstructuredObject): boolean {
  const ann = item.metadata.annotations?.[Annotations.RestoreStatus];
  if (ann === 'true') return true;
  if (ann === 'false') return false;
  const rs = restore.spec.restoreStatus;
  if (!rs) return false;
  const inc = rs.includedResources ?? [];
  if (inc.length === 0) return false;
  return new IncludesExcludes(inc, rs.excludedResources ?? [], (e, v) => resourceEntryMatches(e, v, item.kind)).shouldInclude(groupResource);
}

/** The labels Velero puts on every restored object. */
export function restoreLabels(backupName: string, restoreName: string): Record<string, string> {
  return { [Labels.BackupName]: labelValue(backupName), [Labels.RestoreName]: labelValue(restoreName) };
}

export function withRestoreLabels(obj: UnstructuredObject, backupName: string, restoreName: string): UnstructuredObject {
  obj.metadata.labels = { ...(obj.metadata.labels ?? {}), ...restoreLabels(backupName, restoreName) };
  return obj;
}
