/**
 * Registers cairn's built-in item actions through the same registry an external plugin would use. Backup and
 * restore actions are registered by separate functions so each side can be started on its own.
 */
import type { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import { builtinBackupActions } from './backup-actions.js';
import { BUILTIN_RESTORE_ACTIONS } from './restore-actions.js';

export function registerBuiltinActions(registry: ItemActionRegistry): ItemActionRegistry {
  registerBuiltinBackupActions(registry);
  registerBuiltinRestoreActions(registry);
  return registry;
}

/** Pods → PVCs/ServiceAccount/PriorityClass, PVCs → PV, PVs → PVC, ServiceAccounts → cluster role bindings, CRs → CRD. */
export function registerBuiltinBackupActions(registry: ItemActionRegistry): ItemActionRegistry {
  for (const action of builtinBackupActions()) registry.registerBackupAction(action);
  return registry;
}

export function registerBuiltinRestoreActions(registry: ItemActionRegistry): ItemActionRegistry {
  for (const action of BUILTIN_RESTORE_ACTIONS) registry.registerRestoreAction(action);
  return registry;
}
