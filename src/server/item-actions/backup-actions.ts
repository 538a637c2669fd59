/** The built-in backup item actions, in the order they run for an item. A fresh set per registry (they cache per backup). */
import type { BackupItemAction } from '../../plugins/item-actions/types.js';
import { createCustomResourceBackupAction } from './backup-custom-resource.js';
import { podBackupAction } from './backup-pod.js';
import { pvBackupAction } from './backup-pv.js';
import { pvcBackupAction } from './backup-pvc.js';
import { createServiceAccountBackupAction } from './backup-service-account.js';

export function builtinBackupActions(): BackupItemAction[] {
  return [podBackupAction, pvcBackupAction, pvBackupAction, createServiceAccountBackupAction(), createCustomResourceBackupAction()];
}
