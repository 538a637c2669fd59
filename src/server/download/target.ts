/**
 * Where the file a DownloadRequest names lives: the backup (or the restore's backup) → its storage location → the
 * object key (docs/storage-locations.md). Shared by the DownloadRequest controller and the /download/ endpoint.
 */
import { Kinds, parseBackup, parseRestore, type Backup, type DownloadTarget, type Restore } from '../../api/index.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import type { BackupStore } from '../../storage/backup-store.js';
import { downloadKey } from '../../storage/layout.js';
import type { LocationResolver } from '../../storage/locations.js';

export type ResolvedTarget = { found: true; store: BackupStore; key: string; locationName: string } | { found: false; reason: string };

/** Whether the target is a file of a restore (else of a backup). */
export function isRestoreTarget(kind: DownloadTarget['kind']): boolean {
  return kind.startsWith('Restore');
}

export async function resolveDownloadTarget(opts: { kube: Kube; namespace: string; resolver: LocationResolver; target: DownloadTarget }): Promise<ResolvedTarget> {
  const { target, namespace } = opts;
  let backupName = target.name;
  if (isRestoreTarget(target.kind)) {
    const restore = await customClient<Restore>(opts.kube, Kinds.Restore, parseRestore).get(namespace, target.name);
    if (!restore) return { found: false, reason: `restore ${target.name} not found` };
    if (!restore.spec.backupName) return { found: false, reason: `restore ${target.name} names no backup` };
    backupName = restore.spec.backupName;
  }
  const backup = await customClient<Backup>(opts.kube, Kinds.Backup, parseBackup).get(namespace, backupName);
  if (!backup) return { found: false, reason: `backup ${backupName} not found` };
  const locationName = backup.spec.storageLocation ?? '';
  const resolved = locationName ? await opts.resolver.resolve(locationName) : undefined;
  if (!resolved) return { found: false, reason: `backup storage location ${locationName || '(none)'} not found` };
  return { found: true, store: resolved.store, key: downloadKey(target.kind, target.name), locationName };
}
