/**
 * Creates Backup objects for backups found in storage but not in the cluster, and removes Backup objects whose
 * directory vanished from storage, after forgetting their volume snapshots in the repositories (./orphaned-backup.ts;
 * docs/storage-locations.md).
 *
 * Each location is synced every `spec.backupSyncPeriod` (default: the server's --backup-sync-period; 0 disables),
 * only while it is Available. A backup directory counts only when it has `velero-backup.json`. Imported backups get
 * this install's namespace and this location's name; their PodVolumeBackups are recreated from the backup's
 * `-podvolumebackups.json.gz`, pointing at the new Backup. Storage is only read, so ReadOnly locations sync too.
 */
import {
  BackupPhase,
  BackupRunningPhases,
  BackupStorageLocationPhase,
  Kinds,
  Labels,
  controllerReference,
  creationTimestampOf,
  labelValue,
  parseBackup,
  parseBackupStorageLocation,
  parsePodVolumeBackup,
  parseSchedule,
  type Backup,
  type BackupStorageLocation,
  type ObjectMeta,
  type PodVolumeBackup,
  type Schedule,
  statusTime,
} from '../api/index.js';
import { customClient } from '../kube/custom.js';
import { startCustomController, type ObjectKey, type ReconcileResult } from '../kube/controller.js';
import { LocationResolver } from '../storage/locations.js';
import type { BackupStore } from '../storage/backup-store.js';
import type { ServerContext, Stoppable } from './context.js';
import { forgetOrphanVolumeData, mayForgetOrphanData } from './orphaned-backup.js';
import { locationPeriodMs } from './backup-storage-location-controller.js';

/** Phases of a backup still being written; such a backup in storage is not imported unless it expired. */
const IN_FLIGHT: ReadonlySet<string> = new Set(BackupRunningPhases);

/** Phases whose Backup objects are removed when their directory is gone from storage. */
const ORPHANABLE: ReadonlySet<string> = new Set([BackupPhase.Completed, BackupPhase.PartiallyFailed]);

export type SyncDecision = { action: 'create'; backup: Backup } | { action: 'skip'; reason: string };

/** How often a location is synced, in ms; 0 = sync disabled. */
export function syncPeriodMs(location: BackupStorageLocation, serverDefaultMs: number): number {
  return locationPeriodMs(location.spec.backupSyncPeriod, serverDefaultMs);
}

/**
 * The Backup object to create for a backup found in storage, or why not. `existingSchedules` are the Schedules of
 * the install namespace: owner references to any other Schedule are dropped.
 */
export function backupToSync(opts: {
  dirName: string;
  stored: Backup;
  locationName: string;
  namespace: string;
  now: Date;
  existingSchedules?: ReadonlySet<string>;
}): SyncDecision {
  const { stored, dirName } = opts;
  if (stored.metadata.name && stored.metadata.name !== dirName) {
    return { action: 'skip', reason: `velero-backup.json names backup "${stored.metadata.name}", not "${dirName}"` };
  }
  const phase = stored.status?.phase ?? BackupPhase.New;
  let status = stored.status ? structuredClone(stored.status) : undefined;
  if (IN_FLIGHT.has(phase)) {
    const expiration = stored.status?.expiration ? Date.parse(stored.status.expiration) : NaN;
    if (!(expiration <= opts.now.getTime())) return { action: 'skip', reason: `backup is still ${phase}` };
    status = { ...(status ?? {}), phase: BackupPhase.PartiallyFailed };
  }
  const schedules = opts.existingSchedules ?? new Set<string>();
  const owners = (stored.metadata.ownerReferences ?? []).filter((o) => o.kind !== 'Schedule' || schedules.has(o.name));
  const metadata: ObjectMeta = {
    name: dirName,
    namespace: opts.namespace,
    labels: { ...(stored.metadata.labels ?? {}), [Labels.StorageLocation]: labelValue(opts.locationName) },
  };
  if (stored.metadata.annotations) metadata.annotations = { ...stored.metadata.annotations };
  if (owners.length) metadata.ownerReferences = owners;
  const backup: Backup = {
    apiVersion: Kinds.Backup.apiVersion,
    kind: 'Backup',
    metadata,
    spec: { ...structuredClone(stored.spec ?? {}), storageLocation: opts.locationName },
    ...(status ? { status } : {}),
  } as Backup;
  return { action: 'create', backup };
}

/**
 * A backup that finished this recently is never taken for an orphan: its files may still be on their way to
 * storage, whatever order the writer used.
 */
export const ORPHAN_GRACE_MS = 60_000;

/** Backup objects of this location whose directory is no longer in storage (only finished ones, not just now). */
export function orphanedBackups(opts: { clusterBackups: readonly Backup[]; storedNames: ReadonlySet<string>; locationName: string; now: Date }): string[] {
  const settled = (b: Backup) => {
    const finished = b.status?.completionTimestamp ? Date.parse(b.status.completionTimestamp) : (creationTimestampOf(b)?.getTime() ?? 0);
    return !(opts.now.getTime() - finished < ORPHAN_GRACE_MS);
  };
  return opts.clusterBackups
    .filter((b) => b.spec.storageLocation === opts.locationName)
    .filter((b) => ORPHANABLE.has(b.status?.phase ?? ''))
    .filter(settled)
    .filter((b) => !opts.storedNames.has(b.metadata.name ?? ''))
    .map((b) => b.metadata.name ?? '')
    .filter(Boolean);
}

/** PodVolumeBackups of an imported backup, rewritten to belong to the new Backup object in this namespace. */
export function podVolumeBackupsToSync(opts: { stored: unknown; backup: Backup; locationName: string; namespace: string }): PodVolumeBackup[] {
  if (!Array.isArray(opts.stored)) return [];
  const owner = controllerReference(opts.backup);
  const out: PodVolumeBackup[] = [];
  for (const item of opts.stored as unknown[]) {
    const pvb = item as Partial<PodVolumeBackup> | null;
    if (!pvb?.metadata?.name || !pvb.spec) continue;
    const labels: Record<string, string> = { ...(pvb.metadata.labels ?? {}), [Labels.BackupUID]: opts.backup.metadata.uid ?? '' };
    labels[Labels.BackupName] ??= labelValue(opts.backup.metadata.name ?? '');
    const metadata: ObjectMeta = { name: pvb.metadata.name, namespace: opts.namespace, labels, ownerReferences: [owner] };
    if (pvb.metadata.annotations) metadata.annotations = { ...pvb.metadata.annotations };
    out.push({
      apiVersion: Kinds.PodVolumeBackup.apiVersion,
      kind: 'PodVolumeBackup',
      metadata,
      spec: { ...pvb.spec, backupStorageLocation: opts.locationName },
      ...(pvb.status ? { status: pvb.status } : {}),
    } as PodVolumeBackup);
  }
  return out;
}

function httpStatus(err: unknown): number | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export interface SyncResult {
  created: string[];
  deleted: string[];
  skipped: { name: string; reason: string }[];
  /** Orphans whose Backup object stays because their snapshots could not be forgotten yet. */
  kept: { name: string; reason: string }[];
  /** Snapshots forgotten in the repositories for orphaned backups. */
  forgottenSnapshots: number;
}

/** One sync pass of one location. Idempotent: objects that already exist are left alone. */
export async function syncLocation(opts: { ctx: ServerContext; location: BackupStorageLocation; store: BackupStore }): Promise<SyncResult> {
  const { ctx, location, store } = opts;
  const locationName = location.metadata.name ?? '';
  const backups = customClient<Backup>(ctx.kube, Kinds.Backup, parseBackup);
  const pvbs = customClient<PodVolumeBackup>(ctx.kube, Kinds.PodVolumeBackup, parsePodVolumeBackup);
  const schedules = customClient<Schedule>(ctx.kube, Kinds.Schedule, parseSchedule);
  const log = ctx.logger.child({ location: locationName });
  const result: SyncResult = { created: [], deleted: [], skipped: [], kept: [], forgottenSnapshots: 0 };

  const storedNames = new Set(await store.listBackupDirs());
  const clusterBackups = await backups.list(ctx.namespace);
  const inCluster = new Set(clusterBackups.map((b) => b.metadata.name ?? ''));
  const missing = [...storedNames].filter((n) => !inCluster.has(n));
  const scheduleNames = missing.length ? new Set((await schedules.list(ctx.namespace)).map((s) => s.metadata.name ?? '')) : new Set<string>();

  for (const name of missing) {
    let stored: Backup | undefined;
    try {
      stored = await store.getBackupMetadata(name);
    } catch (err) {
      result.skipped.push({ name, reason: `unreadable velero-backup.json: ${(err as Error).message.split('\n')[0]}` });
      continue;
    }
    if (!stored) continue; // a directory without metadata is not a backup (yet)
    const decision = backupToSync({ dirName: name, stored, locationName, namespace: ctx.namespace, now: ctx.now(), existingSchedules: scheduleNames });
    if (decision.action === 'skip') {
      result.skipped.push({ name, reason: decision.reason });
      continue;
    }
    let created: Backup;
    try {
      created = await backups.create(decision.backup);
    } catch (err) {
      if (httpStatus(err) === 409) continue; // created meanwhile (another pass, or the backup controller)
      throw err;
    }
    result.created.push(name);
    log.info({ backup: name }, 'backup found in storage; Backup object created');
    const storedPvbs = await store.getBackupJson(name, 'podVolumeBackups').catch(() => undefined);
    for (const pvb of podVolumeBackupsToSync({ stored: storedPvbs, backup: created, locationName, namespace: ctx.namespace })) {
      try {
        await pvbs.create(pvb);
      } catch (err) {
        if (httpStatus(err) !== 409) log.warn({ backup: name, podVolumeBackup: pvb.metadata.name, err: (err as Error).message }, 'could not recreate a PodVolumeBackup');
      }
    }
  }

  const orphans = orphanedBackups({ clusterBackups, storedNames, locationName, now: ctx.now() });
  const finishedHere = clusterBackups.filter((b) => b.spec.storageLocation === locationName && ORPHANABLE.has(b.status?.phase ?? '')).length;
  const forget = mayForgetOrphanData({ location, orphans: orphans.length, finishedBackupsOfLocation: finishedHere });
  if (orphans.length && !forget.forget) log.warn({ backups: orphans, reason: forget.reason }, 'backups no longer in storage: their volume snapshots are not forgotten');
  for (const name of orphans) {
    // Read the listing again for this name: a backup written between the listing and now is not an orphan.
    if (await store.backupExists(name)) continue;
    const backup = clusterBackups.find((b) => b.metadata.name === name);
    if (forget.forget && backup) {
      const forgotten = await forgetOrphanVolumeData({ kube: ctx.kube, namespace: ctx.namespace, backup, store, log });
      if (forgotten.errors.length) {
        // The PVBs and DataUploads hold the snapshot IDs: the Backup (their owner) stays until they are forgotten.
        log.warn({ backup: name, errors: forgotten.errors }, 'backup no longer in storage; its volume snapshots could not all be forgotten, trying again at the next sync');
        result.kept.push({ name, reason: forgotten.errors.join('; ') });
        continue;
      }
      if (forgotten.snapshots) log.info({ backup: name, snapshots: forgotten.snapshots }, 'backup no longer in storage; its volume snapshots forgotten');
      result.forgottenSnapshots += forgotten.snapshots;
    }
    if (await backups.delete(ctx.namespace, name)) {
      result.deleted.push(name);
      log.info({ backup: name }, 'backup no longer in storage; Backup object deleted');
    }
  }
  for (const s of result.skipped) log.debug({ backup: s.name, reason: s.reason }, 'backup in storage not synced');
  return result;
}

/** When the next sync of a location is due, in ms from now (0 = now, undefined = never). */
export function nextSyncInMs(opts: { location: BackupStorageLocation; serverDefaultMs: number; now: Date }): number | undefined {
  const every = syncPeriodMs(opts.location, opts.serverDefaultMs);
  if (every === 0) return undefined;
  const last = opts.location.status?.lastSyncedTime ? Date.parse(opts.location.status.lastSyncedTime) : NaN;
  if (Number.isNaN(last)) return 0;
  return Math.max(0, last + every - opts.now.getTime());
}

export function backupSyncReconciler(ctx: ServerContext, resolver = new LocationResolver(ctx.kube, ctx.namespace, ctx.plugins?.locations)) {
  const locations = customClient<BackupStorageLocation>(ctx.kube, Kinds.BackupStorageLocation, parseBackupStorageLocation);
  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    const location = await locations.get(key.namespace, key.name);
    if (!location) return;
    const every = syncPeriodMs(location, ctx.config.backupSyncPeriodMs);
    if (every === 0) return;
    // Unavailable locations are not synced; the validation's status write brings the key back here.
    if (location.status?.phase !== BackupStorageLocationPhase.Available) return;
    const due = nextSyncInMs({ location, serverDefaultMs: ctx.config.backupSyncPeriodMs, now: ctx.now() });
    if (due === undefined) return;
    if (due > 0) return { requeueAfterMs: due };

    await syncLocation({ ctx, location, store: await resolver.open(location) });
    await locations.updateStatus(key.namespace, key.name, (o) => {
      o.status = { ...(o.status ?? {}), lastSyncedTime: statusTime(ctx.now()) };
    });
    return { requeueAfterMs: every };
  };
}

export async function startBackupSyncController(ctx: ServerContext): Promise<Stoppable> {
  const client = customClient<BackupStorageLocation>(ctx.kube, Kinds.BackupStorageLocation, parseBackupStorageLocation);
  return startCustomController<BackupStorageLocation>(ctx, client, {
    name: 'backup-sync',
    reconcile: backupSyncReconciler(ctx),
  });
}
