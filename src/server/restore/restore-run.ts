/**
 * One run of a restore, start to end: open the backup's location, download and read `<backup>.tar.gz` and the
 * volume information, restore the items, then upload the restore's files (`restores/<name>/`: log, results,
 * resource list, volume info, item operations) and say which phase the Restore ends in. Any failure before items
 * could be restored makes the phase Failed with the reason; item failures make it PartiallyFailed.
 */
import { RestorePhase, type Backup, type Restore } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import type { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import { readBackupArchive } from '../archive/reader.js';
import { restoreArchiveSelection } from './archive-selection.js';
import { ensureRepository } from '../repository/ensure.js';
import { DataDownloadCreator } from '../datamover/restore-creator.js';
import { dataMovementRestoreAllowed } from '../datamover/restore-decision.js';
import { dataDownloadOperations } from '../datamover/restore-tracking.js';
import { podVolumeRestoreAllowed } from '../podvolume/restore-allowed.js';
import { podVolumeRestoreOperations } from '../podvolume/restore-operations.js';
import { loadPodVolumeBackups } from '../podvolume/restore-pvbs.js';
import { PodVolumeRestoreCreator } from '../podvolume/restore-pvr.js';
import { PodVolumeRestoreStarter } from '../podvolume/restore-starter.js';
import { ResultsCollector } from '../../api/results.js';
import type { LocationResolver } from '../../storage/locations.js';
import type { ObjectClient } from './dynamic-client.js';
import { parseVolumeInfos } from '../../api/volume-info.js';
import { createRestoreLog } from './restore-log.js';
import { runRestore, type RestoreProgress } from './restorer.js';
import type { ServerPlugins } from '../plugins.js';
import type { PluginSession } from '../../plugins/external/index.js';
import { checkOperations } from '../plugin-operations.js';
import type { RestoreOperation } from '../../api/index.js';
import { NotRestoredVolumes } from './unrestored-volumes.js';
import { loadResourceModifiers } from './resource-modifiers-load.js';
import { pluginConfigReader } from './plugin-config.js';
import type { RestoreRoleKeeper } from '../rbac/restore-role.js';
import type { PendingRestoreHooks } from '../hooks/restore-hooks.js';

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
  /** External plugins (their restore item actions join the built-ins; their processes belong to this run). */
  plugins?: ServerPlugins | undefined;
  /** How long operations restore item actions start may take (the Restore's itemOperationTimeout). */
  operationTimeoutMs?: number;
  /** How often those operations' progress is asked for. */
  operationSyncMs?: number;
  /** Keeps the restore ClusterRole current: refreshed after a CRD is created, and when a create is forbidden. */
  restoreRole?: RestoreRoleKeeper;
  /** Aborted when the restore is canceled: the item pass stops between two items and the outcome is Canceling. */
  signal?: AbortSignal;
}

export interface RestoreOutcome {
  /** WaitingForPluginOperations(PartiallyFailed) when pod volume restores or data downloads were started and are to be waited for. */
  phase:
    | typeof RestorePhase.Completed
    | typeof RestorePhase.PartiallyFailed
    | typeof RestorePhase.Failed
    | typeof RestorePhase.WaitingForPluginOperations
    | typeof RestorePhase.WaitingForPluginOperationsPartiallyFailed
    | typeof RestorePhase.Finalizing
    | typeof RestorePhase.FinalizingPartiallyFailed
    | typeof RestorePhase.Canceling;
  /** Exec hooks of restored pods still to run (the restore waits for them in Finalizing). */
  execHooks: PendingRestoreHooks[];
  /** How many PodVolumeRestores this run started (or found from before a restart). */
  podVolumeRestores: number;
  /** How many DataDownloads this run started (or found from before a restart). */
  dataDownloads: number;
  warnings: number;
  errors: number;
  progress: RestoreProgress;
  failureReason?: string;
  /** Operations restore item actions started, as they ended (waited for within the run). */
  pluginOperations: { attempted: number; completed: number; failed: number };
}

export async function executeRestore(opts: ExecuteRestoreOptions): Promise<RestoreOutcome> {
  const restoreName = opts.restore.metadata.name ?? '';
  const rlog = createRestoreLog({ restore: `${opts.restore.metadata.namespace ?? ''}/${restoreName}`, server: opts.serverLog });
  // The restore's own plugin processes: their log lines go to its log and the server's.
  const session = opts.plugins?.session([rlog.logger, opts.serverLog.child({ restore: restoreName })]);
  try {
    return await executeRestoreIn(opts, rlog, session);
  } finally {
    await session?.close().catch((err: unknown) => opts.serverLog.warn({ restore: restoreName, err: (err as Error).message }, 'could not stop the restore plugin processes'));
  }
}

const NO_OPERATIONS = { attempted: 0, completed: 0, failed: 0 };

async function executeRestoreIn(opts: ExecuteRestoreOptions, rlog: ReturnType<typeof createRestoreLog>, session: PluginSession | undefined): Promise<RestoreOutcome> {
  const { restore, backup } = opts;
  const restoreName = restore.metadata.name ?? '';
  const backupName = backup.metadata.name ?? '';
  const log = rlog.logger;
  const results = new ResultsCollector();
  let progress: RestoreProgress = { totalItems: 0, itemsRestored: 0 };
  const locName = backup.spec.storageLocation ?? '';

  const resolved = await opts.locations.resolve(locName).catch((err: unknown) => {
    log.error(`could not open storage location ${locName}: ${(err as Error).message}`);
    return undefined;
  });
  if (!resolved) {
    return {
      phase: RestorePhase.Failed,
      podVolumeRestores: 0,
      dataDownloads: 0,
      warnings: 0,
      errors: 0,
      progress,
      execHooks: [],
      failureReason: `storage location "${locName}" could not be opened`,
      pluginOperations: NO_OPERATIONS,
    };
  }
  let store = resolved.store;

  let failureReason: string | undefined;
  let resourceList: Record<string, string[]> = {};
  let starter: PodVolumeRestoreStarter | undefined;
  let downloads: DataDownloadCreator | undefined;
  let operations: RestoreOperation[] = [];
  const unrestored = new NotRestoredVolumes();
  let execHooks: PendingRestoreHooks[] = [];
  let canceled = false;
  try {
    if (session && opts.locations.servedByPlugin(resolved.location)) store = await opts.locations.openIn(resolved.location, session);
    const registry = session && opts.plugins ? await opts.plugins.actionsFor(session, opts.registry, new Set(['restore'] as const)) : opts.registry;
    log.info(`Starting restore of backup ${backupName} from location ${locName}`);
    // Only what the restore may take is read into memory; the rest of the archive is read past.
    const archive = await readBackupArchive(await store.getBackupContents(backupName), restoreArchiveSelection(restore));
    for (const w of archive.warnings) {
      log.warn(w);
      results.warn({ kind: 'velero' }, w);
    }
    log.info({ formatVersion: archive.formatVersion, items: archive.present?.size, read: archive.items.length }, 'read the backup archive');
    const volumeInfos = parseVolumeInfos(await store.getBackupJson(backupName, 'volumeInfo'));
    // Read again for this run (validation read them; a restart may come between).
    const loaded = await loadResourceModifiers(opts.kube, restore);
    if (loaded.problem) throw new Error(loaded.problem);
    if (loaded.modifiers) log.info(`Using resource modifiers from ${loaded.modifiers.source} (${loaded.modifiers.rules.length} rules)`);
    const namespace = restore.metadata.namespace ?? '';
    // Without them pods are restored as they are, without their volume data: reported, not fatal.
    const { podVolumeBackups, source } = await loadPodVolumeBackups({ store, kube: opts.kube, namespace, backupName }).catch((err: unknown) => {
      const message = `could not read the backup's pod volume backups, so no pod volume data is restored: ${(err as Error).message}`;
      log.error(message);
      results.error({ kind: 'velero' }, message);
      return { podVolumeBackups: [], source: 'storage' as const };
    });
    if (podVolumeBackups.length) {
      log.info(`The backup has ${podVolumeBackups.length} pod volume backups (read from ${source === 'storage' ? 'the storage location' : 'the cluster'})`);
      const podVolumeDataRestored = podVolumeRestoreAllowed(restore);
      if (!podVolumeDataRestored) log.info('Pod volume data is not restored: the restore excludes persistentvolumeclaims or persistentvolumes');
      const creator = new PodVolumeRestoreCreator({
        kube: opts.kube,
        namespace,
        restore,
        backupStorageLocation: locName,
        log,
        ensureRepository: async (bsl, volumeNamespace) => {
          await ensureRepository({ kube: opts.kube, namespace, bsl, volumeNamespace, timeoutMs: opts.resourceTimeoutMs });
        },
      });
      // Also when no data is restored: pods are still told apart from volumes whose backup failed.
      starter = new PodVolumeRestoreStarter(podVolumeBackups, creator, { volumes: unrestored, podVolumeDataRestored });
    }
    const moved = volumeInfos.filter((v) => v.snapshotDataMoved && v.snapshotDataMovementInfo?.snapshotHandle).length;
    if (moved && !dataMovementRestoreAllowed(restore)) log.info(`The backup moved the data of ${moved} volumes; it is not restored (restorePVs is false)`);
    else if (moved) {
      log.info(`The backup moved the data of ${moved} volumes; their claims are restored through DataDownloads`);
      downloads = new DataDownloadCreator({
        kube: opts.kube,
        restore,
        backupStorageLocation: locName,
        volumeInfos,
        log,
        ensureRepository: async (bsl, volumeNamespace) => {
          await ensureRepository({ kube: opts.kube, namespace, bsl, volumeNamespace, timeoutMs: opts.resourceTimeoutMs });
        },
      });
    }
    const run = await runRestore({
      restore,
      backup,
      archive,
      readAgain: async (select) => (await readBackupArchive(await store.getBackupContents(backupName), { select })).items,
      volumeInfos,
      client: opts.client,
      kube: opts.kube,
      registry,
      log,
      results,
      resourceTimeoutMs: opts.resourceTimeoutMs,
      podVolumeBackups,
      notRestored: { volumes: unrestored, movedDataRestored: dataMovementRestoreAllowed(restore) },
      ...(loaded.modifiers ? { resourceModifiers: loaded.modifiers } : {}),
      pluginConfig: pluginConfigReader(opts.kube, namespace),
      ...(opts.restoreRole ? { restoreRole: opts.restoreRole } : {}),
      ...(starter ? { podVolumes: starter } : {}),
      ...(downloads ? { dataDownloads: downloads } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      onProgress: async (p) => {
        progress = p;
        await opts.onProgress?.(p);
      },
    });
    progress = { totalItems: run.totalItems, itemsRestored: run.itemsRestored };
    resourceList = run.resourceList;
    unrestored.report(results);
    for (const v of unrestored.all) log[v.excluded ? 'warn' : 'error'](`${v.namespace}: ${v.what} was not restored: ${v.reason}`);
    execHooks = run.execHooks;
    operations = await waitForPluginOperations(run.pluginOperations, { ...opts, registry, log, results });
  } catch (err) {
    if (opts.signal?.aborted) {
      canceled = true;
      log.warn('The restore is canceled: no more items are restored');
    } else {
      failureReason = `restore failed: ${(err as Error).message}`;
      log.error(failureReason);
    }
  }

  // A canceled restore waits for nothing: its pod volume restores and data downloads are canceled.
  const stopped = Boolean(failureReason) || canceled;
  const started = stopped ? [] : (starter?.started ?? []);
  const startedDownloads = stopped ? [] : (downloads?.started ?? []);
  if (started.length) log.info(`Waiting for ${started.length} pod volume restores to complete`);
  if (startedDownloads.length) log.info(`Waiting for ${startedDownloads.length} data downloads to complete`);
  try {
    await store.putRestoreFiles(restoreName, {
      log: rlog.text(),
      results: results.toJSON(),
      resourceList,
      itemOperations: [...podVolumeRestoreOperations(restore, started), ...dataDownloadOperations(restore, startedDownloads), ...operations],
      // Finalizing adds the entries of the PVRs and DataDownloads, keeping these.
      volumeInfo: unrestored.volumeInfos(),
    });
  } catch (err) {
    opts.serverLog.warn({ restore: restoreName, err: (err as Error).message }, 'could not upload the restore files');
    results.warn({ kind: 'velero' }, `could not upload the restore's log and results: ${(err as Error).message}`);
  }

  const partly = results.errorCount > 0;
  const hooks = stopped ? [] : execHooks;
  const phase = canceled
    ? RestorePhase.Canceling
    : failureReason
    ? RestorePhase.Failed
    : started.length || startedDownloads.length
      ? partly
        ? RestorePhase.WaitingForPluginOperationsPartiallyFailed
        : RestorePhase.WaitingForPluginOperations
      : hooks.length
        ? partly
          ? RestorePhase.FinalizingPartiallyFailed
          : RestorePhase.Finalizing
        : partly
          ? RestorePhase.PartiallyFailed
          : RestorePhase.Completed;
  return {
    phase,
    podVolumeRestores: started.length,
    dataDownloads: startedDownloads.length,
    warnings: results.warningCount,
    errors: results.errorCount,
    progress,
    execHooks: hooks,
    ...(failureReason ? { failureReason } : {}),
    pluginOperations: {
      attempted: operations.length,
      completed: operations.filter((o) => o.status.phase === 'Completed').length,
      failed: operations.filter((o) => o.status.phase === 'Failed').length,
    },
  };
}

/**
 * Operations restore item actions started: asked for their progress every `operationSyncMs` until each is done,
 * failed or timed out (then cancelled), within the run (the restore stays InProgress meanwhile). Failures are
 * errors in the results.
 */
async function waitForPluginOperations(
  started: RestoreOperation[],
  opts: ExecuteRestoreOptions & { registry: ItemActionRegistry; log: Logger; results: ResultsCollector },
): Promise<RestoreOperation[]> {
  let operations = started;
  if (!operations.length) return operations;
  opts.log.info(`Waiting for ${operations.length} restore item action operations to complete`);
  for (;;) {
    const state = await checkOperations({
      operations,
      owner: opts.restore,
      kind: 'RestoreItemActionV2',
      actionFor: async (name) => opts.registry.restoreAction(name),
      timeoutMs: opts.operationTimeoutMs ?? 4 * 3600_000,
      now: new Date(),
      log: opts.log,
    });
    operations = state.operations;
    for (const e of state.errors) {
      opts.results.error({ kind: 'velero' }, e);
      opts.log.error(e);
    }
    if (!state.pending) return operations;
    opts.signal?.throwIfAborted();
    await new Promise((r) => setTimeout(r, opts.operationSyncMs ?? 10_000));
  }
}
