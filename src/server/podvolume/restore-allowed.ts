/**
 * Velero restores pod volume data only when the restore takes both PVCs and PVs (`restore.go`: "Do not create
 * podvolumerestore when current restore excludes pv/pvc"); the init container is left out too then, so the pod
 * does not wait for data that never comes.
 */
import type { Restore } from '../../api/index.js';
import { resourceFilter, resourceKey } from '../restore/filters.js';

export function podVolumeRestoreAllowed(restore: Restore): boolean {
  const filter = resourceFilter(restore);
  return filter.shouldInclude(resourceKey('persistentvolumeclaims', 'PersistentVolumeClaim')) && filter.shouldInclude(resourceKey('persistentvolumes', 'PersistentVolume'));
}
