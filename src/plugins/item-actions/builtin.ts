/**
 * Registers cairn's built-in item actions through the same registry an external plugin would use. Backup and
 * restore actions are registered by separate functions so each side can be started on its own.
 */
import type { ItemActionRegistry } from './registry.js';
import { BUILTIN_RESTORE_ACTIONS } from './builtin/restore-actions.js';

export function registerBuiltinActions(registry: ItemActionRegistry): ItemActionRegistry {
  registerBuiltinBackupActions(registry);
  registerBuiltinRestoreActions(registry);
  return registry;
}

/** The backup item actions (pods, PVCs, PVs, service accounts…) are added here by the backup controller's work. */
export function registerBuiltinBackupActions(registry: ItemActionRegistry): ItemActionRegistry {
  return registry;
}

export function registerBuiltinRestoreActions(registry: ItemActionRegistry): ItemActionRegistry {
  for (const action of BUILTIN_RESTORE_ACTIONS) registry.registerRestoreAction(action);
  return registry;
}
