/**
 * One run of a restore, start to end: open the backup's location, download and read `<backup>.tar.gz` and the
 * volume information, restore the items, then upload the restore's files (`restores/<name>/`: log, results,
 * resource list, volume info, item operations) and say which phase the Restore ends in. Any failure before items
 * could be restored makes the phase Failed with the reason; item failures make it PartiallyFailed.
 */
import { RestorePhase, type Backup, type Restore } from '../../api/index.js';
import type { Logger } from '../../cli/logger.js';
import type { Kube } from '../../kube/client.js';
import type { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import { readBackupArchive } from '../archive/reader.js';
import { ResultsCollector } from '../results.js';
import type { LocationResolver } from '../storage/locations.js';
import type { ObjectClient } from './dynamic-client.js';
import { parseVolumeInfos } from './pv-policy.js';
import { createRestoreLog } from './restore-log.js';
import { runRestore, type RestoreProgress } from './restorer.js';

export interface ExecuteRestoreOptions {
  restore: Restore;
  backup: Backup;
  kube: Kube;
  client: ObjectClient;
  locations: LocationResolver;
  registry: ItemActionRegistry;
  serverLog: Logger;
  resourceTimeoutMs: number;
  onProgress?: (p: RestoreProgress) => Promise<void>;
}

export interface RestoreOutcome {
  phase: typeof RestorePhase.Completed | typeof RestorePhase.PartiallyFailed | typeof RestorePhase.Failed;
  warnings: number;
  errors: number;
  progress: RestoreProgress;
  failureReason?: string;
}

/** RFC 3339 with seconds, as Kubernetes writes timestamps. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export async function executeRestore(opts: ExecuteRestoreOptions): Promise<RestoreOutcome> {
  const { restore, backup } = opts;
  const restoreName = restore.metadata.name ?? '';
  const backupName = backup.metadata.name ?? '';
  const rlog = createRestoreLog({ restore: restoreName, server: opts.serverLog });
  const log = rlog.logger;
  const results = new ResultsCollector();
  let progress: RestoreProgress = { totalItems: 0, itemsRestored: 0 };
  const locName = backup.spec.storageLocation ?? '';

  const resolved = await opts.locations.resolve(locName).catch((err: unknown) => {
    log.error(`could not open storage location ${locName}: ${(err as Error).message}`);
    return undefined;
  });
  if (!resolved) {
    return { phase: RestorePhase.Failed, warnings: 0, errors: 0, progress, failureReason: `storage location "${locName}" could not be opened` };
  }
  const { store } = resolved;

  let failureReason: string | undefined;
  let resourceList: Record<string, string[]> = {};
  try {
    log.info(`Starting restore of backup ${backupName} from location ${locName}`);
    const archive = await readBackupArchive(await store.getBackupContents(backupName));
    for (const w of archive.warnings) {
      log.warn(w);
      results.warn({ kind: 'velero' }, w);
    }
    log.info({ formatVersion: archive.formatVersion, items: archive.items.length }, 'read the backup archive');
    const volumeInfos = parseVolumeInfos(await store.getBackupJson(backupName, 'volumeInfo'));
    const run = await runRestore({
      restore,
      backup,
      archive,
      volumeInfos,
      client: opts.client,
      kube: opts.kube,
      registry: opts.registry,
      log,
      results,
      resourceTimeoutMs: opts.resourceTimeoutMs,
      onProgress: async (p) => {
        progress = p;
        await opts.onProgress?.(p);
      },
    });
    progress = { totalItems: run.totalItems, itemsRestored: run.itemsRestored };
    resourceList = run.resourceList;
  } catch (err) {
    failureReason = `restore failed: ${(err as Error).message}`;
    log.error(failureReason);
  }

  try {
    await store.putRestoreFiles(restoreName, {
      log: rlog.text(),
      results: results.toJSON(),
      resourceList,
      itemOperations: [],
      volumeInfo: [],
    });
  } catch (err) {
    opts.serverLog.warn({ restore: restoreName, err: (err as Error).message }, 'could not upload the restore files');
    results.warn({ kind: 'velero' }, `could not upload the restore's log and results: ${(err as Error).message}`);
  }

  const phase = failureReason ? RestorePhase.Failed : results.errorCount > 0 ? RestorePhase.PartiallyFailed : RestorePhase.Completed;
  return {
    phase,
    warnings: results.warningCount,
    errors: results.errorCount,
    progress,
    ...(failureReason ? { failureReason } : {}),
  };
}
