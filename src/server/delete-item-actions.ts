/**
 * DeleteItemActions when a backup is deleted, as Velero runs them: only when there are some, the backup's tarball is
 * read (the items no action applies to are read past) and each action sees every item it applies to (with the
 * Backup). An action failing on one item is logged and the others go on (Velero does the same); a tarball that cannot
 * be read stops the deletion with the reason.
 */
import type { Backup } from '../api/index.js';
import type { Logger } from '../base/logger.js';
import type { ItemActionRegistry } from '../plugins/item-actions/registry.js';
import type { BackupStore } from '../storage/backup-store.js';
import { readBackupArchive } from './archive/reader.js';

export interface DeleteItemActionsOptions {
  backup: Backup;
  store: BackupStore;
  registry: ItemActionRegistry;
  log: Logger;
}

/** How many action calls failed (they are logged); throws when the backup's items cannot be read. */
export async function runDeleteItemActions(opts: DeleteItemActionsOptions): Promise<{ executed: number; failed: number }> {
  if (opts.registry.deleteActionCount === 0) return { executed: 0, failed: 0 };
  const name = opts.backup.metadata.name ?? '';
  // Items no action applies to are read past, never parsed or held.
  const archive = await readBackupArchive(await opts.store.getBackupContents(name), {
    select: (ref) => opts.registry.deleteActionsMayApply(ref),
    keep: (item) => opts.registry.deleteActionsFor({ groupResource: item.groupResource, namespace: item.namespace, labels: item.object.metadata.labels }).length > 0,
  });
  let executed = 0;
  let failed = 0;
  for (const item of archive.items) {
    const actions = opts.registry.deleteActionsFor({ groupResource: item.groupResource, namespace: item.namespace, labels: item.object.metadata.labels });
    for (const action of actions) {
      executed++;
      try {
        await action.execute(item.object, { backup: opts.backup, log: opts.log.child({ action: action.name }) });
      } catch (err) {
        failed++;
        opts.log.error({ action: action.name, resource: item.groupResource, namespace: item.namespace, name: item.name, err: (err as Error).message }, 'delete item action failed');
      }
    }
  }
  if (executed) opts.log.info({ backup: name, executed, failed }, 'delete item actions done');
  return { executed, failed };
}
