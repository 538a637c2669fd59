/**
 * Restores the items of a backup archive into the cluster (docs/restore.md): selects items with the
 * Restore's filters, walks group-resources in priority order (CRDs first, established before their objects),
 * ensures target namespaces, decides PVs from the volume information, runs restore item actions, creates each
 * object with the restore labels, and handles objects that exist per `existingResourcePolicy`. Every outcome is
 * recorded in the resource list and the warnings/errors of the results; nothing here writes the Restore itself.
 */
import { Labels, labelValue, operationTime, type Backup, type ExistingResourcePolicy, type PodVolumeBackup, type Restore, type RestoreOperation } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { retryTransient } from '../../kube/client.js';
import { pollUntil } from '../../kube/wait.js';
import type { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import { archiveItemKey, type ArchiveItem, type ArchiveItemRef, type BackupArchive } from '../archive/reader.js';
import type { DataDownloadHook } from '../datamover/restore-creator.js';
import { dynamicPvRestoreValueOf } from '../datamover/restore-decision.js';
import type { PodVolumeRestoreHook } from '../podvolume/restore-starter.js';
import { scopeOf, type ResultsCollector } from '../../api/results.js';
import { ApiError, isApiAlreadyExists, ref, type ObjectClient } from './dynamic-client.js';
import type { RestoreRoleKeeper } from '../rbac/restore-role.js';
import { decideExisting } from './existing.js';
import { filtersNamespaces, itemWanted } from './archive-selection.js';
import { namespaceFilter, resourceFilter, resourceKey } from './filters.js';
import { NamespaceMapping } from './namespace-mapping.js';
import { applyResourceModifiers, type ResourceModifiers } from './resource-modifiers.js';
import { NamespaceEnsurer } from './namespaces.js';
import { isCrdResource, orderGroupResources } from './priorities.js';
import { decidePv } from './pv-policy.js';
import type { StoredBackupVolumeInfo } from '../../api/volume-info.js';
import { resetMetadataAndStatus, shouldRestoreStatus, withRestoreLabels } from './sanitize.js';
import { claimNotRestored, type NotRestoredVolumes } from './unrestored-volumes.js';
import type { HookPod } from '../hooks/backup-hooks.js';
import { restoreExecHooksFor, type PendingRestoreHooks } from '../hooks/restore-hooks.js';

export type ItemOutcome = 'created' | 'updated' | 'skipped' | 'failed';

export interface RestoreProgress {
  totalItems: number;
  itemsRestored: number;
}

export interface RunRestoreOptions {
  restore: Restore;
  backup: Backup;
  /** The items read for this restore (./archive-selection.ts), or the whole archive. */
  archive: BackupArchive;
  /**
   * Reads the archive again for the items `select` takes: items the restore needs but did not read (an item action's
   * additional items outside the selection). Without it, only `archive.items` can be restored.
   */
  readAgain?: (select: (ref: ArchiveItemRef) => boolean) => Promise<ArchiveItem[]>;
  volumeInfos: readonly StoredBackupVolumeInfo[];
  client: ObjectClient;
  kube: Kube;
  registry: ItemActionRegistry;
  /** The restore's own log (uploaded as `restore-<name>-logs.gz`). */
  log: Logger;
  results: ResultsCollector;
  /** How long to wait for a CRD to be established or a namespace to finish terminating. */
  resourceTimeoutMs: number;
  pollIntervalMs?: number;
  onProgress?: (p: RestoreProgress) => Promise<void> | void;
  /** The backup's PodVolumeBackups, handed to restore item actions (fs-backup volumes of pods). */
  podVolumeBackups?: readonly PodVolumeBackup[];
  /** Starts the pod volume restores of each pod this restore creates. */
  podVolumes?: PodVolumeRestoreHook;
  /** Starts the data download of each claim this restore creates whose data the backup moved. */
  dataDownloads?: DataDownloadHook;
  /** Records claims this restore creates whose data movement failed in the backup (no data comes back for them). */
  notRestored?: { volumes: NotRestoredVolumes; movedDataRestored: boolean };
  /** The restore's resource modifiers, applied to each item after the restore item actions. */
  resourceModifiers?: ResourceModifiers;
  /** Reads the configuration ConfigMap of a restore item action (./plugin-config.ts). */
  pluginConfig?: (action: string) => Promise<Record<string, string> | undefined>;
  /** The restore ClusterRole, refreshed after a CRD is established so its custom resources can be created. */
  restoreRole?: RestoreRoleKeeper;
  /** Stops the item pass between two items (a cancel): the run throws the signal's reason. */
  signal?: AbortSignal;
}

export interface RunRestoreResult extends RestoreProgress {
  /** `{"<apiVersion>/<Kind>": ["ns/name(created)", ...]}`, lists sorted. */
  resourceList: Record<string, string[]>;
  /** Asynchronous operations restore item actions started (Velero's v2 actions), phase New. */
  pluginOperations: RestoreOperation[];
  /** Exec hooks of the restored pods, by container, to run once their containers are up. */
  execHooks: PendingRestoreHooks[];
}

type Scoped = { namespace?: string | undefined };
type RecordedItem = { apiVersion: string; kind: string } & Scoped & { name: string };

/**
 * How the resource list names an item's outcome (Velero's rule): created and updated as they happened; an item
 * that was neither is `skipped` when restoring it raised no warning or error, and `failed` when it did (an
 * existing object that differs, a patch that failed, an item action's error).
 */
export function listedOutcome(outcome: ItemOutcome, raisedProblems: boolean): ItemOutcome {
  if (outcome === 'created' || outcome === 'updated' || outcome === 'failed') return outcome;
  return raisedProblems ? 'failed' : 'skipped';
}

interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export { skipReason } from './archive-selection.js';

/**
 * The archive items this Restore takes, before ordering. Cluster-scoped items follow `includeClusterResources`:
 * true → all, false → none, unset → all when every namespace is restored, else only those the restored items
 * need (the CRDs of restored custom resources, the PVs of restored claims), as Velero documents.
 */
export function selectItems(restore: Restore, items: readonly ArchiveItem[]): ArchiveItem[] {
  const nsFilter = namespaceFilter(restore);
  const resFilter = resourceFilter(restore);
  const clusterResources = restore.spec.includeClusterResources;
  const wanted = itemWanted(restore);
  const namespaced = items.filter((i) => i.namespace !== undefined && nsFilter.shouldInclude(i.namespace) && wanted(i));
  const namespaces = items.filter((i) => i.groupResource === 'namespaces' && resFilter.shouldInclude(resourceKey(i.groupResource, i.object.kind)) && nsFilter.shouldInclude(i.name));
  const cluster = items.filter((i) => i.namespace === undefined && i.groupResource !== 'namespaces' && wanted(i));
  let clusterSelected: ArchiveItem[];
  if (clusterResources === true) clusterSelected = cluster;
  else if (clusterResources === false) clusterSelected = [];
  else if (!filtersNamespaces(restore)) clusterSelected = cluster;
  else clusterSelected = cluster.filter((c) => neededBy(c, namespaced));
  const chosen = new Set([...namespaces, ...clusterSelected, ...namespaced]);
  return items.filter((i) => chosen.has(i));
}

/** Whether a cluster-scoped item is needed by the namespaced items restored: a CRD of their kinds, a PV they claim. */
function neededBy(item: ArchiveItem, namespaced: readonly ArchiveItem[]): boolean {
  const o = item.object;
  if (isCrdResource(item.groupResource)) {
    const spec = o.spec as { group?: string; names?: { kind?: string } } | undefined;
    return namespaced.some((n) => n.object.kind === spec?.names?.kind && n.object.apiVersion.split('/')[0] === spec?.group);
  }
  if (item.groupResource === 'persistentvolumes') {
    const claim = (o.spec as { claimRef?: { namespace?: string; name?: string } } | undefined)?.claimRef;
    return namespaced.some((n) => n.groupResource === 'persistentvolumeclaims' && n.namespace === claim?.namespace && n.name === claim?.name);
  }
  return false;
}

export async function runRestore(opts: RunRestoreOptions): Promise<RunRestoreResult> {
  return new RestoreRun(opts).run();
}

class RestoreRun {
  private readonly mapping: NamespaceMapping;
  private readonly namespaces: NamespaceEnsurer;
  private readonly resourceList = new Map<string, string[]>();
  private readonly pvsToProvision = new Set<string>();
  private readonly done = new Set<string>();
  private readonly byKey = new Map<string, ArchiveItem>();
  /** Backed-up Namespace objects by name, as read (more are looked up when needed). */
  private readonly nsObjects: Map<string, UnstructuredObject>;
  /** Items already looked for by reading the archive again (found or not). */
  private readonly lookedUp = new Set<string>();
  private readonly policy: ExistingResourcePolicy | undefined;
  /** Backed-up UID → the object restored (or found) for it, to re-point owner references. */
  private readonly restoredByOldUid = new Map<string, { apiVersion: string; kind: string; name: string; uid: string }>();
  /** Created objects whose backed-up owner references may point at restored owners. */
  private readonly ownedItems: { ref: ReturnType<typeof ref>; ownerReferences: OwnerRef[] }[] = [];
  private progress: RestoreProgress = { totalItems: 0, itemsRestored: 0 };
  private lastProgressAt = 0;
  private readonly pluginOperations: RestoreOperation[] = [];
  /** Every group-resource of the archive, to resolve names like `pod` in actions' selectors. */
  private readonly archiveResources: readonly string[];
  private readonly execHooks: PendingRestoreHooks[] = [];

  constructor(private readonly opts: RunRestoreOptions) {
    this.mapping = NamespaceMapping.of(opts.restore);
    this.nsObjects = new Map(opts.archive.items.filter((i) => i.groupResource === 'namespaces').map((i) => [i.name, i.object] as const));
    this.namespaces = new NamespaceEnsurer({
      client: opts.client,
      backupName: opts.backup.metadata.name ?? '',
      restoreName: opts.restore.metadata.name ?? '',
      fromBackup: this.nsObjects,
      terminatingTimeoutMs: opts.resourceTimeoutMs,
      ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
    });
    const p = opts.restore.spec.existingResourcePolicy;
    this.policy = p === 'none' || p === 'update' ? p : undefined;
    for (const item of opts.archive.items) this.byKey.set(archiveItemKey(item), item);
    const present = opts.archive.present;
    this.archiveResources = [...new Set(present ? [...present].map((k) => k.slice(0, k.indexOf('/'))) : opts.archive.items.map((i) => i.groupResource))];
  }

  /** A selector's resource name as a group-resource of the archive: exact, plural of a singular, or the first of its group. */
  private resolveResource = (name: string): string | undefined => {
    const n = name.toLowerCase();
    return this.archiveResources.find((r) => r === n || r === `${n}s` || r.split('.')[0] === n);
  };

  private get log(): Logger {
    return this.opts.log;
  }

  async run(): Promise<RunRestoreResult> {
    const selected = selectItems(this.opts.restore, this.opts.archive.items);
    this.progress = { totalItems: selected.length, itemsRestored: 0 };
    await this.reportProgress(true);
    const byResource = new Map<string, ArchiveItem[]>();
    for (const item of selected) {
      const list = byResource.get(item.groupResource) ?? [];
      list.push(item);
      byResource.set(item.groupResource, list);
    }
    const order = orderGroupResources(byResource.keys());
    // CRDs first, so the API server serves their kinds before anything else is looked up.
    for (const gr of [...order.filter(isCrdResource), ...order.filter((g) => !isCrdResource(g))]) {
      const items = (byResource.get(gr) ?? []).sort((a, b) => `${a.namespace ?? ''}/${a.name}`.localeCompare(`${b.namespace ?? ''}/${b.name}`));
      this.log.info({ resource: gr, items: items.length }, `Restoring resource '${gr}'`);
      for (const item of items) {
        this.opts.signal?.throwIfAborted();
        await this.restoreItem(item);
        this.progress.itemsRestored++;
        await this.reportProgress(false);
      }
    }
    await this.relinkOwners();
    await this.reportProgress(true);
    this.log.info(`Restored ${this.progress.itemsRestored} items out of an estimated total of ${this.progress.totalItems}`);
    const resourceList = Object.fromEntries([...this.resourceList.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, [...v].sort()]));
    return { ...this.progress, resourceList, execHooks: [...this.execHooks], pluginOperations: this.pluginOperations };
  }

  private async reportProgress(force: boolean): Promise<void> {
    const now = Date.now();
    if (!force && now - this.lastProgressAt < 1000) return;
    this.lastProgressAt = now;
    await this.opts.onProgress?.({ ...this.progress });
  }

  private record(obj: RecordedItem, outcome: ItemOutcome): void {
    const key = `${obj.apiVersion}/${obj.kind}`;
    const list = this.resourceList.get(key) ?? [];
    list.push(`${obj.namespace ? `${obj.namespace}/` : ''}${obj.name}(${outcome})`);
    this.resourceList.set(key, list);
  }

  private async restoreItem(item: ArchiveItem): Promise<ItemOutcome> {
    const key = archiveItemKey(item);
    if (this.done.has(key)) return 'skipped';
    this.done.add(key);
    const target = item.namespace !== undefined ? this.mapping.target(item.namespace) : undefined;
    const scope = scopeOf(target ?? (item.groupResource === 'namespaces' ? this.mapping.target(item.name) : undefined));
    const what = `${item.object.kind} ${target ? `${target}/` : ''}${item.name}`;
    const problemsBefore = this.problemCount();
    try {
      const { outcome, recorded } = await this.restoreItemUnchecked(item, target);
      const final = listedOutcome(outcome, this.problemCount() > problemsBefore);
      if (recorded) this.record(recorded, final);
      return final;
    } catch (err) {
      const message = `error restoring ${item.groupResource}/${target ? `${target}/` : ''}${item.name}: ${(err as Error).message}`;
      this.opts.results.error(scope, message);
      this.log.error({ item: what }, message);
      this.record({ apiVersion: item.object.apiVersion, kind: item.object.kind, namespace: target, name: item.name }, 'failed');
      return 'failed';
    }
  }

  private problemCount(): number {
    return this.opts.results.warningCount + this.opts.results.errorCount;
  }

  /** Restores one item; says how it ended and under which identity the resource list names it. */
  private async restoreItemUnchecked(item: ArchiveItem, target: string | undefined): Promise<{ outcome: ItemOutcome; recorded?: RecordedItem }> {
    const { restore, backup, client } = this.opts;
    const backupName = backup.metadata.name ?? '';
    const restoreName = restore.metadata.name ?? '';
    if (item.groupResource === 'namespaces') {
      const name = this.mapping.target(item.name);
      const outcome = (await this.namespaces.ensure(item.name, name)) === 'created' ? 'created' : 'skipped';
      this.log.info(`Namespace ${name}: ${outcome === 'created' ? 'created' : 'exists, left as it is'}`);
      // Velero lists a namespace only when the restore created it.
      return { outcome, ...(outcome === 'created' ? { recorded: { apiVersion: 'v1', kind: 'Namespace', name } } : {}) };
    }
    if (item.namespace !== undefined && target !== undefined) {
      if (!this.nsObjects.has(item.namespace)) await this.lookUp({ groupResource: 'namespaces', name: item.namespace });
      await this.namespaces.ensure(item.namespace, target);
    }

    if (item.groupResource === 'persistentvolumes') {
      const exists = (await client.get(ref(item.object))) !== undefined;
      const decision = decidePv({ pv: item.object, volumeInfos: this.opts.volumeInfos, exists, ...(this.opts.podVolumeBackups ? { podVolumeBackups: this.opts.podVolumeBackups } : {}) });
      if (decision.action !== 'restore') {
        if (decision.action === 'provision') this.pvsToProvision.add(item.name);
        if (decision.action === 'provision' && decision.warning) this.opts.results.warn({ kind: 'cluster' }, decision.warning);
        this.log.info(`Not restoring persistent volume ${item.name}: ${decision.reason}`);
        return { outcome: 'skipped', recorded: { apiVersion: item.object.apiVersion, kind: item.object.kind, name: item.name } };
      }
    }

    const keepStatus = shouldRestoreStatus(restore, item.groupResource, item.object);
    let obj = resetMetadataAndStatus(item.object, { keepStatus });
    const status = obj.status;
    delete obj.status;
    if (target !== undefined) obj.metadata.namespace = target;

    for (const action of this.opts.registry.restoreActionsFor(item.groupResource, item.namespace, item.object.metadata.labels, this.resolveResource)) {
      const res = await action.execute(obj, {
        restore,
        backup,
        kube: this.opts.kube,
        log: this.log,
        itemFromBackup: item.object,
        volumeInfos: this.opts.volumeInfos,
        ...(this.opts.podVolumeBackups ? { podVolumeBackups: this.opts.podVolumeBackups } : {}),
        ...(this.opts.pluginConfig ? { pluginConfig: this.opts.pluginConfig } : {}),
        warn: (message) => {
          this.opts.results.warn(scopeOf(target), message);
          this.log.warn(message);
        },
      });
      if (res.skip) {
        this.log.info(`Skipping ${item.object.kind} ${item.name}: action ${action.name}: ${res.skip.reason}`);
        return { outcome: 'skipped', recorded: { apiVersion: obj.apiVersion, kind: obj.kind, namespace: target, name: item.name } };
      }
      obj = res.item;
      for (const extra of res.additionalItems ?? []) {
        const related = await this.lookUp(extra);
        if (related) await this.restoreItem(related);
      }
      if (res.waitForAdditionalItems && res.additionalItems?.length && action.areAdditionalItemsReady) {
        const why = await this.waitForAdditionalItems(action.name, res.additionalItems, res.additionalItemsReadyTimeoutMs || this.opts.resourceTimeoutMs, action.areAdditionalItemsReady.bind(action));
        if (why) {
          this.opts.results.error(scopeOf(target), `error from restore item action ${action.name} waiting for the additional items of ${item.object.kind} ${item.name}: ${why}`);
          return { outcome: 'failed', recorded: { apiVersion: obj.apiVersion, kind: obj.kind, namespace: target, name: item.name } };
        }
      }
      if (res.operationID) this.recordOperation(action.name, item, target, res.operationID);
    }

    if (item.groupResource === 'persistentvolumeclaims') await this.unbindIfReprovisioned(obj);
    if (this.opts.resourceModifiers) obj = this.modify(obj, item);
    withRestoreLabels(obj, backupName, restoreName);
    if (target !== undefined) obj.metadata.namespace = target;

    this.log.info(`Attempting to restore ${obj.kind}: ${obj.metadata.name}${target ? ` in namespace ${target}` : ''}`);
    let outcome: ItemOutcome;
    let created: UnstructuredObject | undefined;
    try {
      created = await this.createAllowed(() => retryTransient(() => client.create(obj)));
      outcome = 'created';
    } catch (err) {
      if (!isApiAlreadyExists(err)) throw err;
      outcome = await this.handleExisting(obj, target);
    }
    if (created && status !== undefined) {
      try {
        await client.replaceStatus({ ...created, status } as UnstructuredObject);
      } catch (err) {
        this.opts.results.warn(scopeOf(target), `could not restore status of ${obj.kind} ${obj.metadata.name}: ${(err as Error).message}`);
      }
    }
    if (isCrdResource(item.groupResource)) {
      await this.waitEstablished(obj);
      await this.opts.restoreRole?.refresh().catch((err: unknown) => this.log.warn(`could not refresh the restore ClusterRole: ${(err as Error).message}`));
    }
    if (item.groupResource === 'pods' && outcome === 'created') {
      await this.startPodVolumeRestores(item.object, obj, created);
      await this.collectExecHooks(obj, created);
    }
    if (item.groupResource === 'persistentvolumeclaims' && outcome === 'created') {
      await this.startDataDownload(item.object, obj, created);
      this.noteClaimWithoutData(item.object, obj);
    }
    await this.rememberForOwners(item.object, obj, created, outcome);
    return { outcome, recorded: { apiVersion: obj.apiVersion, kind: obj.kind, namespace: target, name: obj.metadata.name } };
  }

  /** Asks the action until it says the items are ready; the reason it gave up, or undefined when they are. */
  private async waitForAdditionalItems(
    action: string,
    items: readonly { groupResource: string; namespace?: string; name: string }[],
    timeoutMs: number,
    ready: (items: readonly { groupResource: string; namespace?: string; name: string }[], restore: Restore) => Promise<boolean>,
  ): Promise<string | undefined> {
    try {
      await pollUntil(async () => ({ done: await ready(items, this.opts.restore), state: 'not ready' }), {
        timeoutMs,
        intervalMs: this.opts.pollIntervalMs ?? 1000,
        what: `the additional items of ${action} to be ready`,
      });
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** An operation an action started, as Velero records it (phase New, created now). */
  private recordOperation(action: string, item: ArchiveItem, target: string | undefined, operationID: string): void {
    const dot = item.groupResource.indexOf('.');
    this.pluginOperations.push({
      spec: {
        restoreName: this.opts.restore.metadata.name ?? '',
        restoreUID: this.opts.restore.metadata.uid ?? '',
        restoreItemAction: action,
        resourceIdentifier: {
          Group: dot < 0 ? '' : item.groupResource.slice(dot + 1),
          Resource: dot < 0 ? item.groupResource : item.groupResource.slice(0, dot),
          Namespace: target ?? '',
          Name: item.name,
        },
        operationID,
      },
      status: { phase: 'New', created: operationTime(new Date()) },
    });
    this.log.info({ action, operationID }, `Restore item action started an asynchronous operation for ${item.object.kind} ${item.name}`);
  }

  /**
   * A pod this restore created (now, or before a server restart) gets its PodVolumeRestores right away; failures to
   * start them are restore errors (Velero reports pod volume errors at the Velero level).
   */
  private async startPodVolumeRestores(fromBackup: UnstructuredObject, obj: UnstructuredObject, created: UnstructuredObject | undefined): Promise<void> {
    const hook = this.opts.podVolumes;
    if (!hook) return;
    const pod = created ?? (await this.opts.client.get(ref(obj)));
    if (!pod) return;
    for (const message of await hook.afterPodCreated({ podFromBackup: fromBackup, pod })) {
      this.opts.results.error({ kind: 'velero' }, message);
      this.log.error(message);
    }
  }

  /** The exec hooks of a pod this restore created, run once its containers are up (./../hooks/restore-exec-step.ts). */
  private async collectExecHooks(obj: UnstructuredObject, created: UnstructuredObject | undefined): Promise<void> {
    const pod = created ?? (await this.opts.client.get(ref(obj)));
    if (!pod) return;
    const groups = restoreExecHooksFor(pod as unknown as HookPod, this.opts.restore.spec.hooks?.resources ?? []);
    if (groups.length) this.log.info({ pod: `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`, containers: groups.map((g) => g.container) }, 'Exec hooks will run in the restored pod once its containers are up');
    this.execHooks.push(...groups);
  }

  /**
   * A claim this restore created (now, or before a server restart) and rewrote for the data mover (it has the
   * dynamic-pv-restore selector) gets its DataDownload right away; failures to start it are restore errors.
   */
  private async startDataDownload(fromBackup: UnstructuredObject, obj: UnstructuredObject, created: UnstructuredObject | undefined): Promise<void> {
    const hook = this.opts.dataDownloads;
    if (!hook) return;
    if (!dynamicPvRestoreValueOf(obj)) return;
    const pvc = created ?? (await this.opts.client.get(ref(obj)));
    if (!pvc) return;
    for (const message of await hook.afterPvcCreated({ pvcFromBackup: fromBackup, pvc })) {
      this.opts.results.error({ kind: 'velero' }, message);
      this.log.error(message);
    }
  }

  /**
   * A create the API server forbids may be of a kind the restore ClusterRole does not list yet (served since its last
   * refresh): refresh it and try again while the authorizer catches up (a few seconds at most).
   */
  private async createAllowed<T>(create: () => Promise<T>): Promise<T> {
    try {
      return await create();
    } catch (err) {
      const keeper = this.opts.restoreRole;
      if (!keeper || !(err instanceof ApiError) || err.code !== 403) throw err;
      const changed = await keeper.refresh().catch(() => false);
      if (!changed) throw err;
      let result: T | undefined;
      await pollUntil(
        async () => {
          try {
            result = await create();
            return { done: true, state: 'created' };
          } catch (again) {
            if (again instanceof ApiError && again.code === 403) return { done: false, state: 'still forbidden' };
            throw again;
          }
        },
        { what: 'the refreshed restore ClusterRole to take effect', timeoutMs: 15_000, intervalMs: 500 },
      );
      return result as T;
    }
  }

  private noteClaimWithoutData(fromBackup: UnstructuredObject, obj: UnstructuredObject): void {
    const track = this.opts.notRestored;
    if (!track) return;
    const claim = claimNotRestored({
      volumeInfos: this.opts.volumeInfos,
      pvcName: fromBackup.metadata.name,
      sourceNamespace: fromBackup.metadata.namespace ?? '',
      targetNamespace: obj.metadata.namespace ?? '',
      movedDataRestored: track.movedDataRestored,
    });
    if (claim) track.volumes.add([claim]);
  }

  private async rememberForOwners(fromBackup: UnstructuredObject, obj: UnstructuredObject, created: UnstructuredObject | undefined, outcome: ItemOutcome): Promise<void> {
    const oldUid = fromBackup.metadata.uid;
    const live = created ?? (outcome === 'failed' ? undefined : await this.opts.client.get(ref(obj)));
    const newUid = live?.metadata.uid;
    if (oldUid && newUid) this.restoredByOldUid.set(oldUid, { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, uid: newUid });
    const owners = fromBackup.metadata.ownerReferences;
    if (outcome === 'created' && Array.isArray(owners) && owners.length) this.ownedItems.push({ ref: ref(obj), ownerReferences: owners as OwnerRef[] });
  }

  /**
   * Owner references name owners by UID, and restored owners have new UIDs: references to owners this restore
   * brought back are set again with the new UIDs once every item exists; references to anything else stay dropped
   * (an owner reference to a missing UID would make the garbage collector delete the object).
   */
  private async relinkOwners(): Promise<void> {
    for (const owned of this.ownedItems) {
      const relinked = owned.ownerReferences.flatMap((o) => {
        const owner = this.restoredByOldUid.get(o.uid);
        return owner ? [{ ...o, apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid }] : [];
      });
      if (!relinked.length) continue;
      try {
        const live = await this.opts.client.get(owned.ref);
        if (!live) continue;
        const current = ((live.metadata.ownerReferences ?? []) as OwnerRef[]).filter((c) => !relinked.some((r) => r.uid === c.uid || (r.kind === c.kind && r.name === c.name)));
        await this.opts.client.mergePatch(owned.ref, { metadata: { ownerReferences: [...current, ...relinked] } });
      } catch (err) {
        const message = `could not restore the owner references of ${owned.ref.kind} ${owned.ref.name}: ${(err as Error).message}`;
        this.opts.results.warn(scopeOf(owned.ref.namespace), message);
        this.log.warn(message);
      }
    }
  }

  /**
   * Resource modifiers, as Velero applies them: after the item actions, on the item with its backed-up namespace
   * (conditions name the namespaces of the backup); a rule that fails is an error of the item, which is restored
   * without that rule's change.
   */
  private modify(obj: UnstructuredObject, item: ArchiveItem): UnstructuredObject {
    const target = obj.metadata.namespace;
    const asBackedUp = item.namespace !== undefined ? { ...obj, metadata: { ...obj.metadata, namespace: item.namespace } } : obj;
    const out = applyResourceModifiers(this.opts.resourceModifiers as ResourceModifiers, asBackedUp, item.groupResource);
    for (const a of out.applied) this.log.info(`Applied resource modifier ${a} to ${item.groupResource} ${item.namespace ? `${item.namespace}/` : ''}${item.name}`);
    for (const e of out.errors) {
      this.opts.results.error(scopeOf(target), e);
      this.log.error(e);
    }
    const modified = out.object;
    if (target !== undefined) modified.metadata.namespace = target;
    return modified;
  }

  /**
   * An item of the archive by its path: held, or read again when the archive has it but it was not read (outside the
   * selection). One read brings the other items of its group-resource in the restored namespaces (or its scope)
   * too, so a run of look-ups for items of one kind (claims of pods a label selector left out) reads the archive
   * once, not once per item.
   */
  private async lookUp(ref: ArchiveItemRef): Promise<ArchiveItem | undefined> {
    const key = archiveItemKey(ref);
    const held = this.byKey.get(key);
    const { readAgain, archive } = this.opts;
    if (held || !readAgain || !archive.present?.has(key) || this.lookedUp.has(key)) return held;
    const nsFilter = namespaceFilter(this.opts.restore);
    const items = await readAgain((r) => {
      const k = archiveItemKey(r);
      if (this.byKey.has(k) || this.lookedUp.has(k)) return false;
      const take =
        k === key ||
        (r.groupResource === ref.groupResource && (r.namespace === undefined ? !ref.namespace : r.namespace === ref.namespace || nsFilter.shouldInclude(r.namespace)));
      if (take) this.lookedUp.add(k);
      return take;
    });
    this.lookedUp.add(key);
    for (const item of items) {
      this.byKey.set(archiveItemKey(item), item);
      if (item.groupResource === 'namespaces' && item.namespace === undefined) this.nsObjects.set(item.name, item.object);
    }
    this.log.info(`Read ${items.length} items of ${ref.groupResource} again from the backup archive for ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`);
    return this.byKey.get(key);
  }

  /** A claim whose volume is provisioned anew (or is nowhere to be found) is restored without `spec.volumeName`. */
  private async unbindIfReprovisioned(pvc: UnstructuredObject): Promise<void> {
    const spec = pvc.spec as { volumeName?: string } | undefined;
    const volumeName = spec?.volumeName;
    if (!spec || !volumeName) return;
    const pvKey = archiveItemKey({ groupResource: 'persistentvolumes', name: volumeName });
    const inBackup = this.byKey.has(pvKey) || (this.opts.archive.present?.has(pvKey) ?? false);
    const restoredOrPresent = inBackup || (await this.opts.client.get({ apiVersion: 'v1', kind: 'PersistentVolume', name: volumeName })) !== undefined;
    if (this.pvsToProvision.has(volumeName) || !restoredOrPresent) {
      delete spec.volumeName;
      this.log.info(`Claim ${pvc.metadata.name} is restored unbound so a new volume is provisioned for it (was ${volumeName})`);
    }
  }

  private async handleExisting(obj: UnstructuredObject, target: string | undefined): Promise<ItemOutcome> {
    const { client, restore } = this.opts;
    const inCluster = await client.get(ref(obj));
    if (!inCluster) throw new Error('the object exists but could not be read');
    // Created by this very restore before a server restart: the work is already done.
    if (inCluster.metadata.labels?.[Labels.RestoreName] === labelValue(restore.metadata.name ?? '')) return 'created';
    const decision = decideExisting({ policy: this.policy, desired: obj, inCluster });
    const scope = scopeOf(target);
    switch (decision.action) {
      case 'unchanged':
        if (decision.patch) await client.mergePatch(ref(obj), decision.patch);
        this.log.info(`${obj.kind} ${obj.metadata.name} exists and is the same as in the backup`);
        return 'skipped';
      case 'warn':
        this.opts.results.warn(scope, decision.message);
        this.log.warn(decision.message);
        return 'skipped';
      case 'patch':
        try {
          await client.mergePatch(ref(obj), decision.patch);
          this.log.info(`${obj.kind} ${obj.metadata.name} exists and was updated (${decision.reason})`);
          return 'updated';
        } catch (err) {
          const message = `could not update ${obj.kind} ${obj.metadata.name}: ${(err as Error).message}; only the restore labels were updated`;
          this.opts.results.warn(scope, message);
          this.log.warn(message);
          await client.mergePatch(ref(obj), { metadata: { labels: { [Labels.BackupName]: obj.metadata.labels?.[Labels.BackupName], [Labels.RestoreName]: obj.metadata.labels?.[Labels.RestoreName] } } });
          return 'skipped';
        }
    }
  }

  private async waitEstablished(crd: UnstructuredObject): Promise<void> {
    await pollUntil(
      async () => {
        const live = await this.opts.client.get(ref(crd));
        const conds = ((live?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
        const established = conds.some((c) => c.type === 'Established' && c.status === 'True');
        return { done: established, state: established ? 'Established' : 'not established' };
      },
      { what: `CustomResourceDefinition ${crd.metadata.name} to be established`, timeoutMs: this.opts.resourceTimeoutMs, intervalMs: this.opts.pollIntervalMs ?? 500 },
    );
  }
}

