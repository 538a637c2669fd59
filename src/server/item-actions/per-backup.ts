/** What a backup item action reads from the cluster once per backup rather than once per item. */
import type { BackupItemContext } from '../../plugins/item-actions/types.js';

/**
 * `load` run once for the backup of the context and its promise kept until another backup asks; a failed load is
 * forgotten, so the next item of the same backup tries again.
 */
export function oncePerBackup<T>(load: (ctx: BackupItemContext) => Promise<T>): (ctx: BackupItemContext) => Promise<T> {
  let cache: { backupUid: string; value: Promise<T> } | undefined;
  return (ctx) => {
    const uid = ctx.backup.metadata?.uid ?? ctx.backup.metadata?.name ?? '';
    if (!cache || cache.backupUid !== uid) {
      const value = load(ctx);
      cache = { backupUid: uid, value };
      value.catch(() => {
        cache = undefined;
      });
    }
    return cache.value;
  };
}
