/**
 * The Restore controller: New → FailedValidation (every reason listed) or InProgress → Completed | PartiallyFailed
 * | Failed. The work itself (download, read, restore items) is in ./restore-run.ts; this file only decides, from
 * the Restore as observed, which step comes next. A Restore found InProgress that this process is not running was
 * interrupted by a server restart: it is run again (restoring is idempotent: objects this restore already
 * created are recognised by their restore label), at most MAX_ATTEMPTS times, then failed with the reason.
 */
import {
  formatDuration,
  parseDuration,
  BackupPhase,
  Finalizers,
  Kinds,
  deletionTimestampOf,
  RestorePhase,
  parseBackup,
  parseRestore,
  type Backup,
  type Restore,
} from '../../api/index.js';
import { customClient, type CustomClient } from '../../kube/custom.js';
import { keyString, startController, type ObjectKey, type ReconcileResult } from '../../kube/controller.js';
import { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import { registerBuiltinRestoreActions } from '../../plugins/item-actions/builtin.js';
import type { ServerContext, Stoppable } from '../context.js';
import { LocationResolver } from '../storage/locations.js';
import { DynamicClient } from './dynamic-client.js';
import { executeRestore, rfc3339 } from './restore-run.js';
import { validateRestore } from './validate.js';

/** Annotation counting how many times a server started this restore (restart safety). */
export const ATTEMPTS_ANNOTATION = 'restore.cairn.io/attempts';
export const MAX_ATTEMPTS = 3;

const TERMINAL: ReadonlySet<string> = new Set([RestorePhase.FailedValidation, RestorePhase.Completed, RestorePhase.PartiallyFailed, RestorePhase.Failed]);

export interface RestoreControllerOptions extends ServerContext {
  registry?: ItemActionRegistry;
}

export function restoreReconciler(opts: RestoreControllerOptions) {
  const restores = customClient<Restore>(opts.kube, Kinds.Restore, parseRestore);
  const backups = customClient<Backup>(opts.kube, Kinds.Backup, parseBackup);
  const locations = new LocationResolver(opts.kube, opts.namespace);
  const registry = opts.registry ?? registerBuiltinRestoreActions(new ItemActionRegistry());
  const client = new DynamicClient(opts.kube);
  const running = new Set<string>();
  const log = opts.logger.child({ controller: 'restore' });

  async function failValidation(key: ObjectKey, problems: string[]): Promise<void> {
    log.info({ restore: key.name, problems }, 'restore failed validation');
    await restores.updateStatus(key.namespace, key.name, (r) => {
      if ((r.status?.phase ?? RestorePhase.New) !== RestorePhase.New) return false;
      r.status = { ...(r.status ?? {}), phase: RestorePhase.FailedValidation, validationErrors: problems };
    });
  }

  async function markFailed(key: ObjectKey, reason: string): Promise<void> {
    await restores.updateStatus(key.namespace, key.name, (r) => {
      if (TERMINAL.has(r.status?.phase ?? '')) return false;
      r.status = { ...(r.status ?? {}), phase: RestorePhase.Failed, failureReason: reason, completionTimestamp: rfc3339(opts.now()) };
    });
  }

  /** Counts this attempt on the Restore; false when it has been interrupted too often. */
  async function countAttempt(key: ObjectKey): Promise<number> {
    let attempts = 0;
    await restores.update(key.namespace, key.name, (r) => {
      attempts = Number(r.metadata.annotations?.[ATTEMPTS_ANNOTATION] ?? '0') + 1;
      r.metadata.annotations = { ...(r.metadata.annotations ?? {}), [ATTEMPTS_ANNOTATION]: String(attempts) };
      const fin = r.metadata.finalizers ?? [];
      if (!fin.includes(Finalizers.RestoreExternalResources)) r.metadata.finalizers = [...fin, Finalizers.RestoreExternalResources];
    });
    return attempts;
  }

  async function removeFiles(restore: Restore, key: ObjectKey): Promise<void> {
    const backup = restore.spec.backupName ? await backups.get(key.namespace, restore.spec.backupName) : undefined;
    const locName = backup?.spec.storageLocation;
    const resolved = locName ? await locations.resolve(locName).catch(() => undefined) : undefined;
    if (resolved) {
      try {
        await resolved.store.deleteRestore(key.name);
      } catch (err) {
        log.warn({ restore: key.name, err: (err as Error).message }, 'could not delete the restore files from storage');
      }
    }
    await restores.update(key.namespace, key.name, (r) => {
      const fin = r.metadata.finalizers ?? [];
      if (!fin.includes(Finalizers.RestoreExternalResources)) return false;
      r.metadata.finalizers = fin.filter((f) => f !== Finalizers.RestoreExternalResources);
    });
  }

  async function run(key: ObjectKey): Promise<void> {
    const attempts = await countAttempt(key);
    if (attempts > MAX_ATTEMPTS) {
      await markFailed(key, `the restore was interrupted by ${attempts - 1} server restarts; giving up`);
      return;
    }
    const restore = await restores.get(key.namespace, key.name);
    if (!restore || restore.status?.phase !== RestorePhase.InProgress) return;
    const backup = await backups.get(key.namespace, restore.spec.backupName ?? '');
    if (!backup) {
      await markFailed(key, `backup "${restore.spec.backupName ?? ''}" disappeared while the restore was starting`);
      return;
    }
    const outcome = await executeRestore({
      restore,
      backup,
      kube: opts.kube,
      client,
      locations,
      registry,
      serverLog: log,
      resourceTimeoutMs: opts.config.resourceTimeoutMs,
      onProgress: async (p) => {
        await restores.updateStatus(key.namespace, key.name, (r) => {
          if (r.status?.phase !== RestorePhase.InProgress) return false;
          r.status = { ...r.status, progress: { totalItems: p.totalItems, itemsRestored: p.itemsRestored } };
        });
      },
    });
    await restores.updateStatus(key.namespace, key.name, (r) => {
      if (TERMINAL.has(r.status?.phase ?? '')) return false;
      r.status = {
        ...(r.status ?? {}),
        phase: outcome.phase,
        completionTimestamp: rfc3339(opts.now()),
        warnings: outcome.warnings,
        errors: outcome.errors,
        progress: outcome.progress,
        ...(outcome.failureReason ? { failureReason: outcome.failureReason } : {}),
      };
      // The attempt counter only matters while the restore runs.
      if (r.metadata.annotations) delete r.metadata.annotations[ATTEMPTS_ANNOTATION];
    });
    log.info({ restore: key.name, phase: outcome.phase, warnings: outcome.warnings, errors: outcome.errors }, 'restore finished');
  }

  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    const restore = await restores.get(key.namespace, key.name);
    if (!restore) return;
    if (deletionTimestampOf(restore)) {
      if (!running.has(keyString(key))) await removeFiles(restore, key);
      return;
    }
    const phase = restore.status?.phase ?? RestorePhase.New;
    if (TERMINAL.has(phase) || running.has(keyString(key))) return;
    if (phase === RestorePhase.New) {
      const backup = restore.spec.backupName ? await backups.get(key.namespace, restore.spec.backupName) : undefined;
      const locName = backup?.spec.storageLocation ?? opts.config.defaultBackupLocation;
      const location = backup ? await locations.get(locName) : undefined;
      const problems = validateRestore({ restore, backup, location });
      if (problems.length) return failValidation(key, problems);
      const started = await restores.update(key.namespace, key.name, (r) => {
        if ((r.status?.phase ?? RestorePhase.New) !== RestorePhase.New) return false;
        const { validationErrors: _none, ...rest } = r.status ?? {};
        // An unset or zero timeout takes the server default, written into the spec as Velero does.
        const timeout = r.spec.itemOperationTimeout;
        if (!timeout || parseDuration(timeout) === 0) r.spec.itemOperationTimeout = formatDuration(opts.config.defaultItemOperationTimeoutMs);
        r.status = { ...rest, phase: RestorePhase.InProgress, startTimestamp: rfc3339(opts.now()) };
      });
      if (started?.status?.phase !== RestorePhase.InProgress) return;
      log.info({ restore: key.name, backup: backup?.metadata.name, backupPhase: backup?.status?.phase ?? BackupPhase.New }, 'restore started');
    } else if (phase !== RestorePhase.InProgress) {
      // Phases cairn never sets (WaitingForPluginOperations*, Finalizing*): left to whoever set them.
      return;
    } else {
      log.info({ restore: key.name }, 'found a restore InProgress that no worker is running (server restart); running it again');
    }
    running.add(keyString(key));
    try {
      await run(key);
    } finally {
      running.delete(keyString(key));
    }
  };
}

export async function startRestoreController(ctx: ServerContext): Promise<Stoppable> {
  const client: CustomClient<Restore> = customClient<Restore>(ctx.kube, Kinds.Restore, parseRestore);
  return startController<Restore>({
    name: 'restore',
    kube: ctx.kube,
    logger: ctx.logger,
    path: client.path(ctx.namespace),
    list: () => client.listForWatch(ctx.namespace),
    reconcile: restoreReconciler(ctx),
  });
}
