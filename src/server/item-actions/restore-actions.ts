/** The built-in restore item actions, in the order they run for an item. */
import type { RestoreItemAction } from '../../plugins/item-actions/types.js';
import { jobRestoreAction } from './restore-job.js';
import { podRestoreAction } from './restore-pod.js';
import { podVolumeRestoreAction } from './restore-pod-volume.js';
import { initRestoreHookAction } from './restore-init-hooks.js';
import { pvRestoreAction } from './restore-pv.js';
import { pvcRestoreAction } from './restore-pvc.js';
import { pvcDataMoverRestoreAction } from './restore-pvc-data-mover.js';
import { changeImageNameAction } from './restore-change-image-name.js';
import { changeStorageClassAction } from './restore-change-storage-class.js';
import { clusterRoleBindingRestoreAction, roleBindingRestoreAction } from './restore-role-bindings.js';
import { volumeSnapshotClassRestoreAction, volumeSnapshotContentRestoreAction, volumeSnapshotRestoreAction } from './restore-csi-snapshot.js';
import { secretRestoreAction } from './restore-secret.js';
import { serviceAccountRestoreAction } from './restore-service-account.js';
import { serviceRestoreAction } from './restore-service.js';

export const BUILTIN_RESTORE_ACTIONS: readonly RestoreItemAction[] = [
  podRestoreAction,
  podVolumeRestoreAction,
  // After restore-wait is in place: hook init containers go right behind it.
  initRestoreHookAction,
  serviceRestoreAction,
  pvcRestoreAction,
  pvcDataMoverRestoreAction,
  volumeSnapshotRestoreAction,
  volumeSnapshotContentRestoreAction,
  volumeSnapshotClassRestoreAction,
  pvRestoreAction,
  serviceAccountRestoreAction,
  secretRestoreAction,
  jobRestoreAction,
  changeStorageClassAction,
  changeImageNameAction,
  roleBindingRestoreAction,
  clusterRoleBindingRestoreAction,
];
