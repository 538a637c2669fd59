/**
 * Backs up the items of one Backup into an archive: discovers what the cluster serves, lists each resource page
 * by page (never the whole cluster in memory), applies the spec's filters, runs item actions (which may add
 * related items: a pod's PVCs, a PVC's PV, a CR's CRD) and writes each item to the archive once. Problems with
 * single items are errors in the results (the backup ends PartiallyFailed); only a broken archive or an aborted
 * run throws.
 */
import { operationTime, type Backup, type BackupOperation, type DataUpload, type PodVolumeBackup } from '../../api/index.js';
import { Annotations, Labels } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { statusCode } from '../../kube/errors.js';
import type { ItemActionRegistry } from '../../plugins/item-actions/registry.js';
import type { RelatedItem, UnstructuredObject } from '../../plugins/item-actions/types.js';
import type { BackupArchiveWriter } from '../archive/writer.js';
import { ResultsCollector, scopeOf } from '../../api/results.js';
import { BackupVolumeInfoCollector, type PersistentVolumeClaimLike, type PersistentVolumeLike } from './volume-info-collector.js';
import type { PodVolumeBackupCreator } from '../podvolume/backup-creator.js';
import type { PersistentVolumeClaimItem, VolumeSnapshotCreator } from '../datamover/backup-creator.js';
import type { CsiSnapshotRef } from '../csi/snapshot-objects.js';
import type { IncludeExcludePolicy } from './volume-policies.js';
import type { PodLike } from '../podvolume/backup-volumes.js';
import type { ApiReader } from './api-reader.js';
import { Discovery, type ApiResource } from './discovery.js';
import {
  IncludesExcludes,
  NAMESPACES,
  PERSISTENT_VOLUMES,
  PERSISTENT_VOLUME_CLAIMS,
  ResourcePolicy,
  backupLabelMatcher,
  labelSelectorString,
  type LabelMatcher,
} from './filters.js';
import { BackedUpItems } from './resource-list.js';
import { backupFieldWarnings } from './validation.js';
import { ExecError, type PodExecutor } from '../../kube/pod-exec.js';
import { backupHooksFor, type HookPod } from '../hooks/backup-hooks.js';
import { runExecHooks, type HookRunOutcome } from '../hooks/hook-runner.js';
import { pendingPod, samePod, type PendingPostHooks } from '../hooks/pending-post-hooks.js';

export const LIST_PAGE_SIZE = 500;
const PODS = 'pods';
/** Above this many included namespaces, resources are listed cluster-wide and filtered by namespace here. */
export const PER_NAMESPACE_LIST_LIMIT = 10;

export interface BackupProgressUpdate {
  totalItems: number;
  itemsBackedUp: number;
}

export interface BackupItemsOptions {
  kube: Kube;
  api: ApiReader;
  backup: Backup;
  registry: ItemActionRegistry;
  archive: BackupArchiveWriter;
  log: Logger;
  onProgress?: (p: BackupProgressUpdate) => void;
  signal?: AbortSignal;
  pageSize?: number;
  /** Creates the PodVolumeBackups of backed-up pods (fs-backup); absent = no fs-backup. */
  podVolumes?: PodVolumeBackupCreator;
  /** Takes the CSI snapshots of backed-up PVCs (kept, or moved by DataUploads); absent = none. */
  volumeSnapshots?: VolumeSnapshotCreator;
  /** The resource policies' scoped filters, added to the spec's (which take precedence). */
  includeExcludePolicy?: IncludeExcludePolicy;
  now?: () => Date;
  /** Runs backup hooks in pods (`pods/exec`); absent = a pod with hooks gets a hook error. */
  exec?: PodExecutor;
  /** Told the pods whose post hooks wait for their volumes, each time that list changes (it is recorded on the Backup). */
  onPendingPostHooks?: (pending: readonly PendingPostHooks[]) => Promise<void>;
  /** Post hooks an earlier run of this backup put off and never ran (the server stopped): run first. */
  leftoverPostHooks?: readonly PendingPostHooks[];
}

export interface BackupItemsResult {
  results: ResultsCollector;
  resourceList: Record<string, string[]>;
  volumeInfo: BackupVolumeInfoCollector;
  itemsBackedUp: number;
  totalItems: number;
  /** PodVolumeBackups of this backup (the backup waits for them before it completes). */
  podVolumeBackups: PodVolumeBackup[];
  /** DataUploads of this backup (waited for like the PodVolumeBackups). */
  dataUploads: DataUpload[];
  /** Asynchronous operations item actions started (Velero's v2 actions); the backup waits for them too. */
  pluginOperations: BackupOperation[];
  /** CSI snapshots this backup keeps (waited for until they are ready). */
  csiSnapshots: CsiSnapshotRef[];
  /** Hooks run in this run (status.hookStatus). */
  hooks: { attempted: number; failed: number };
  /** Pods whose post hooks wait for their PodVolumeBackups or snapshots (run by the operations controller). */
  pendingPostHooks: PendingPostHooks[];
}

interface RawList {
  items?: UnstructuredObject[];
  metadata?: { continue?: string; remainingItemCount?: number };
}

export async function backupItems(opts: BackupItemsOptions): Promise<BackupItemsResult> {
  return new ItemBackupper(opts).run();
}

class ItemBackupper {
  private readonly results = new ResultsCollector();
  private readonly items = new BackedUpItems();
  private readonly volumeInfo = new BackupVolumeInfoCollector();
  private readonly pluginOperations: BackupOperation[] = [];
  private readonly spec;
  private readonly log: Logger;
  private readonly matcher: LabelMatcher;
  private readonly nsFilter: IncludesExcludes;
  private discovery = Discovery.fromResources([]);
  private policy!: ResourcePolicy;
  /** Included namespaces that exist, by name. */
  private readonly namespaces = new Map<string, UnstructuredObject>();
  private readonly namespacesWithItems = new Set<string>();
  private readonly estimates = new Map<string, number>();
  private itemsBackedUp = 0;
  /** The resource being listed and the item count when it started (its estimate shrinks as items are written). */
  private current: { groupResource: string; startedAt: number } | undefined;
  private readonly hookCounts = { attempted: 0, failed: 0 };
  /** Pods whose post hooks wait: for the end of the item pass (data movement), then for their volumes. */
  private pendingPostHooks: PendingPostHooks[] = [];

  constructor(private readonly opts: BackupItemsOptions) {
    this.spec = opts.backup.spec ?? {};
    this.log = opts.log;
    this.matcher = backupLabelMatcher(this.spec);
    this.nsFilter = new IncludesExcludes(this.spec.includedNamespaces, this.spec.excludedNamespaces);
  }

  async run(): Promise<BackupItemsResult> {
    try {
      return await this.runItems();
    } catch (err) {
      // A pod whose pre hook ran is never left without its post hook: run them before the failure goes up.
      await this.releasePendingPostHooks('the backup stopped before its volumes were backed up').catch(() => undefined);
      throw err;
    }
  }

  private async runItems(): Promise<BackupItemsResult> {
    if (this.opts.leftoverPostHooks?.length) {
      this.log.info({ pods: this.opts.leftoverPostHooks.map((p) => `${p.namespace}/${p.pod}`) }, 'Running the post hooks an earlier run of this backup left waiting');
      for (const entry of this.opts.leftoverPostHooks) await this.runHooks(podOf(entry), 'post', entry.hooks);
      await this.setPending([]);
    }
    const { discovery, problems } = await Discovery.load(this.opts.api);
    this.discovery = discovery;
    for (const p of problems) this.warn(undefined, p);
    for (const w of backupFieldWarnings(this.spec)) this.warn(undefined, w);
    this.policy = new ResourcePolicy(this.spec, this.nsFilter, (name) => this.resolveFilterEntry(name), this.opts.includeExcludePolicy);
    for (const key of Object.keys(this.spec.orderedResources ?? {})) {
      const gr = this.discovery.resources.find((r) => r.resource === key)?.groupResource ?? this.discovery.resolve(key);
      if (!gr) this.warn(undefined, `resource "${key}" named in orderedResources is not served by the cluster`);
      else if (!this.policy.collects(gr, this.discovery.byGroupResource(gr)?.namespaced ?? true)) this.warn(undefined, `resource "${key}" named in orderedResources is not included in the backup`);
    }
    await this.loadNamespaces();

    const resources = this.orderedResources().filter((r) => r.groupResource !== NAMESPACES && this.policy.collects(r.groupResource, r.namespaced));
    await this.estimate(resources);
    for (const r of resources) {
      this.checkAborted();
      this.current = { groupResource: r.groupResource, startedAt: this.itemsBackedUp };
      await this.backupResource(r);
      this.current = undefined;
      this.estimates.delete(r.groupResource);
      this.reportProgress();
    }
    await this.backupNamespaces();
    const { dataUploads, csiSnapshots } = await this.backupVolumeSnapshots();
    await this.postHooksAfterItems(dataUploads);
    this.log.info({ itemsBackedUp: this.itemsBackedUp }, 'Backed up all items');
    return {
      results: this.results,
      resourceList: this.items.toResourceList(),
      volumeInfo: this.volumeInfo,
      itemsBackedUp: this.itemsBackedUp,
      totalItems: this.itemsBackedUp,
      podVolumeBackups: this.opts.podVolumes?.podVolumeBackups ?? [],
      dataUploads,
      pluginOperations: this.pluginOperations,
      csiSnapshots,
      hooks: { ...this.hookCounts },
      pendingPostHooks: [...this.pendingPostHooks],
    };
  }

  // ---- hooks --------------------------------------------------------------------------------------------------

  private async runHooks(pod: UnstructuredObject, phase: 'pre' | 'post', hooks: PendingPostHooks['hooks']): Promise<HookRunOutcome> {
    const exec: PodExecutor = this.opts.exec ?? (() => Promise.reject(new ExecError('pod exec is not available to this backup run')));
    const outcome = await runExecHooks({ pod: pod as unknown as HookPod, phase, hooks, exec, log: this.log });
    this.hookCounts.attempted += outcome.attempted;
    this.hookCounts.failed += outcome.failed;
    for (const e of outcome.errors) this.error(pod.metadata.namespace, e);
    return outcome;
  }

  private async setPending(pending: PendingPostHooks[]): Promise<void> {
    this.pendingPostHooks = pending;
    await this.opts.onPendingPostHooks?.(pending);
  }

  /**
   * After a pod's item: its post hooks run now, unless its volumes are still being backed up (PodVolumeBackups of
   * this run) or may be moved by snapshot (decided at the end of the item pass): then they wait, recorded.
   */
  private async afterPod(pod: UnstructuredObject, namespace: string): Promise<void> {
    const hooks = backupHooksFor(pod as unknown as HookPod, 'post', this.spec);
    if (!hooks.length) return;
    const name = pod.metadata.name;
    const hasPvbs = (this.opts.podVolumes?.podVolumeBackups ?? []).some((p) => p.spec.pod.namespace === namespace && p.spec.pod.name === name);
    const claims = ((pod.spec as { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] } | undefined)?.volumes ?? [])
      .map((v) => v.persistentVolumeClaim?.claimName ?? '')
      .filter(Boolean);
    const mayMove = Boolean(this.opts.volumeSnapshots?.maySnapshot) && claims.length > 0;
    if (!hasPvbs && !mayMove) {
      await this.runHooks(pod, 'post', hooks);
      return;
    }
    const entry: PendingPostHooks = { namespace, pod: name, uid: pod.metadata.uid ?? '', claims, hooks };
    await this.setPending([...this.pendingPostHooks.filter((p) => !samePod(p, entry)), entry]);
    this.log.info({ pod: `${namespace}/${name}` }, 'Post hooks of the pod wait until its volumes are backed up');
  }

  /** At the end of the item pass: pods with neither PodVolumeBackups nor DataUploads run their post hooks now. */
  private async postHooksAfterItems(dataUploads: readonly DataUpload[]): Promise<void> {
    const pvbs = this.opts.podVolumes?.podVolumeBackups ?? [];
    const still: PendingPostHooks[] = [];
    for (const entry of this.pendingPostHooks) {
      const waits =
        pvbs.some((p) => p.spec.pod.namespace === entry.namespace && p.spec.pod.name === entry.pod) ||
        dataUploads.some((d) => d.spec.sourceNamespace === entry.namespace && entry.claims.includes(d.spec.sourcePVC));
      if (waits) still.push(entry);
      else await this.runHooks(podOf(entry), 'post', entry.hooks);
    }
    if (still.length !== this.pendingPostHooks.length) await this.setPending(still);
  }

  /** Runs every waiting post hook now (the run is failing or stopping). */
  private async releasePendingPostHooks(why: string): Promise<void> {
    if (!this.pendingPostHooks.length) return;
    this.log.warn({ pods: this.pendingPostHooks.map((p) => `${p.namespace}/${p.pod}`) }, `Running the post hooks of pods now: ${why}`);
    for (const entry of this.pendingPostHooks) await this.runHooks(podOf(entry), 'post', entry.hooks);
    await this.setPending([]);
  }

  /**
   * CSI snapshots of the backed-up PVCs (kept, or moved with snapshot data movement), decided once every pod is done
   * so the claims fs-backup took in this backup are known (they are not snapshotted too).
   */
  private async backupVolumeSnapshots(): Promise<{ dataUploads: DataUpload[]; csiSnapshots: CsiSnapshotRef[] }> {
    const mover = this.opts.volumeSnapshots;
    if (!mover?.enabled) return { dataUploads: [], csiSnapshots: [] };
    this.checkAborted();
    const takenByFsBackup = new Set((this.opts.podVolumes?.podVolumeBackups ?? []).map((p) => p.metadata.labels?.[Labels.PVCUID] ?? '').filter(Boolean));
    const outcome = await mover.createAll({ takenByFsBackup, log: this.log });
    for (const s of outcome.skipped) this.volumeInfo.addCsiSnapshotSkip(s.pvName, s.reason);
    for (const v of outcome.volumeInfo) this.volumeInfo.addDataMovement(v);
    for (const w of outcome.warnings) this.warn(w.namespace, w.message);
    for (const e of outcome.errors) this.error(e.namespace, e.message);
    return { dataUploads: outcome.dataUploads, csiSnapshots: outcome.csiSnapshots };
  }

  // ---- what to back up ----------------------------------------------------------------------------------------

  private resolveFilterEntry(name: string): string {
    if (IncludesExcludes.isPattern(name)) return name;
    const gr = this.discovery.resolve(name);
    if (!gr) {
      this.warn(undefined, `resource "${name}" named in a filter is not served by the cluster`);
      return name;
    }
    return gr;
  }

  /** The core group first (as Velero), then the other groups in discovery order. */
  private orderedResources(): ApiResource[] {
    const listable = this.discovery.resources.filter((r) => r.verbs.includes('list') && r.verbs.includes('get'));
    return [...listable.filter((r) => r.group === ''), ...listable.filter((r) => r.group !== '')];
  }

  private async loadNamespaces(): Promise<void> {
    const nsResource = this.discovery.byGroupResource(NAMESPACES);
    if (!nsResource) return;
    for await (const ns of this.listAll(nsResource, undefined, undefined)) {
      const name = ns.metadata.name;
      if (!this.nsFilter.shouldInclude(name)) continue;
      if (ns.metadata.labels?.[Labels.ExcludeFromBackup] === 'true') {
        this.log.info({ namespace: name }, `Skipping namespace labelled ${Labels.ExcludeFromBackup}=true`);
        continue;
      }
      this.namespaces.set(name, ns);
    }
    for (const name of this.nsFilter.includes) {
      if (name === '*') continue;
      if (IncludesExcludes.isPattern(name)) {
        const matched = [...this.namespaces.keys()].some((ns) => new IncludesExcludes([name], []).shouldInclude(ns));
        if (!matched) this.warn(undefined, `no namespace matches the included namespace pattern "${name}"`);
      } else if (!this.namespaces.has(name)) this.warn(undefined, `included namespace "${name}" does not exist or is excluded`);
    }
  }

  /**
   * Where to list a resource: cluster-wide, or once per included namespace when only a few are included (with
   * many, one cluster-wide list filtered here costs fewer requests).
   */
  private scopesOf(r: ApiResource): (string | undefined)[] {
    if (!r.namespaced || this.nsFilter.includesAll || this.namespaces.size > PER_NAMESPACE_LIST_LIMIT) return [undefined];
    return [...this.namespaces.keys()].sort();
  }

  /** A cheap first guess of the total (one small list per resource) so progress means something early. */
  private async estimate(resources: ApiResource[]): Promise<void> {
    for (const r of resources) {
      let n = 0;
      for (const ns of this.scopesOf(r)) {
        try {
          const page = await this.opts.api.get<RawList>(Discovery.collectionPath(r, ns), { limit: 1, ...this.serverSelector() });
          n += (page.items?.length ?? 0) + (page.metadata?.remainingItemCount ?? 0);
        } catch {
          /* the real list reports the problem */
        }
      }
      this.estimates.set(r.groupResource, n);
    }
    this.reportProgress();
  }

  private serverSelector(): { labelSelector?: string } {
    return this.spec.labelSelector ? { labelSelector: labelSelectorString(this.spec.labelSelector) } : {};
  }

  /**
   * `spec.orderedResources`: the objects of a resource named there (`ns/name` or `name`), in that order, before the
   * rest of the resource, as Velero sorts them. Keys are matched like filter entries (`pods`, `deployments.apps`).
   * A named object that is not there, or that the filters leave out, is a warning (Velero: "Cannot find resource").
   */
  private orderedNames(r: ApiResource): string[] {
    const ordered = this.spec.orderedResources ?? {};
    for (const [key, value] of Object.entries(ordered)) {
      if (key === r.resource || this.discovery.resolve(key) === r.groupResource) return orderedResourceNames(value);
    }
    return [];
  }

  private async backupOrderedItems(r: ApiResource): Promise<void> {
    const names = this.orderedNames(r);
    if (!names.length) return;
    this.log.info({ resource: r.groupResource, order: names }, 'Backing up ordered resources first');
    for (const full of names) {
      const slash = full.indexOf('/');
      const namespace = r.namespaced && slash > 0 ? full.slice(0, slash) : undefined;
      const name = slash > 0 ? full.slice(slash + 1) : full;
      const item = await this.itemByName(r, name, namespace).catch(() => undefined);
      const wanted = item && (!r.namespaced || (namespace !== undefined && this.namespaces.has(namespace))) && this.matcher(item.metadata.labels);
      if (!item || !wanted) {
        this.warn(namespace, `Cannot find resource '${full}' of ${r.groupResource} named in orderedResources (it does not exist or the backup's filters leave it out)`);
        continue;
      }
      await this.backupItem(r, { ...item, apiVersion: r.apiVersion, kind: r.kind }, false);
    }
  }

  private async backupResource(r: ApiResource): Promise<void> {
    this.log.info({ resource: r.groupResource }, 'Backing up resource');
    await this.backupOrderedItems(r);
    for (const ns of this.scopesOf(r)) {
      try {
        for await (const item of this.listAll(r, ns, this.serverSelector().labelSelector)) {
          const itemNs = item.metadata.namespace;
          if (r.namespaced && (!itemNs || !this.namespaces.has(itemNs))) continue;
          if (!this.matcher(item.metadata.labels)) continue;
          await this.backupItem(r, item, false);
        }
      } catch (err) {
        if (this.opts.signal?.aborted) throw err;
        this.error(ns, `error listing ${r.groupResource}${ns ? ` in namespace ${ns}` : ''}: ${(err as Error).message}`);
      }
    }
  }

  /** Namespace objects last: with a selector, those matching it or holding a backed-up item. */
  private async backupNamespaces(): Promise<void> {
    const r = this.discovery.byGroupResource(NAMESPACES);
    if (!r || !this.policy.collects(NAMESPACES, false)) return;
    const selective = Boolean(this.spec.labelSelector) || (this.spec.orLabelSelectors?.length ?? 0) > 0;
    for (const name of [...this.namespaces.keys()].sort()) {
      const ns = this.namespaces.get(name) as UnstructuredObject;
      if (selective && !this.matcher(ns.metadata.labels) && !this.namespacesWithItems.has(name)) continue;
      await this.backupItem(r, ns, false);
    }
  }

  private async *listAll(r: ApiResource, namespace: string | undefined, labelSelector: string | undefined): AsyncGenerator<UnstructuredObject> {
    let cont: string | undefined;
    for (;;) {
      this.checkAborted();
      let page: RawList;
      try {
        page = await this.opts.api.get<RawList>(Discovery.collectionPath(r, namespace), {
          limit: this.opts.pageSize ?? LIST_PAGE_SIZE,
          continue: cont,
          labelSelector,
        });
      } catch (err) {
        // The continue token expired (410 Gone, a list that took minutes): list again from the start; items
        // already written are skipped, so nothing is taken twice.
        if (cont && statusCode(err) === 410) {
          this.log.info({ resource: r.groupResource }, 'List continuation expired; listing the resource again');
          cont = undefined;
          continue;
        }
        throw err;
      }
      for (const item of page.items ?? []) yield { ...item, apiVersion: r.apiVersion, kind: r.kind };
      cont = page.metadata?.continue || undefined;
      if (!cont) return;
    }
  }

  // ---- one item -----------------------------------------------------------------------------------------------

  /**
   * `parentMustInclude`: the item an action returned, whose related item this is, carries
   * `must-include-additional-items: "true"`: as in Velero, its related items skip the include/exclude filters.
   */
  private async backupItem(r: ApiResource, item: UnstructuredObject, related: boolean, parentMustInclude = false): Promise<void> {
    const { name } = item.metadata;
    const namespace = r.namespaced ? item.metadata.namespace : undefined;
    const where = { resource: r.groupResource, ...(namespace ? { namespace } : {}), name };
    if (this.items.has(r.groupResource, namespace, name)) return;
    const mustInclude = parentMustInclude || item.metadata.annotations?.[Annotations.MustIncludeAdditionalItems] === 'true';
    if (related && !mustInclude) {
      if (!this.policy.acceptsRelated(r.groupResource, r.namespaced)) {
        this.log.info(where, 'Skipping related item: its resource is excluded from the backup');
        return;
      }
      if (namespace && !this.namespaces.has(namespace)) {
        this.log.info(where, 'Skipping related item: its namespace is excluded from the backup');
        return;
      }
    }
    if (item.metadata.labels?.[Labels.ExcludeFromBackup] === 'true') {
      this.log.info(where, `Skipping item labelled ${Labels.ExcludeFromBackup}=true`);
      return;
    }
    if (!this.items.claim(r.groupResource, namespace, name)) return;

    this.log.info(where, 'Backing up item');
    if (r.groupResource === PODS && namespace) {
      const pre = await this.runHooks(item, 'pre', backupHooksFor(item as unknown as HookPod, 'pre', this.spec));
      if (pre.failedHard) {
        // Velero: the pod is flagged as backed up and left out; its post hooks do not run.
        this.error(namespace, `Error running pre hooks for pod ${namespace}/${name}: the pod is not backed up`);
        return;
      }
    }
    const resolve = (n: string) => this.discovery.resolve(n);
    // Velero's item blocks: what an ItemBlockAction names goes with the item (backed up right after it here).
    const block: RelatedItem[] = [];
    for (const action of this.opts.registry.itemBlockActionsFor({ groupResource: r.groupResource, namespace, labels: item.metadata.labels }, resolve)) {
      try {
        block.push(...(await action.getRelatedItems(item, { backup: this.opts.backup, log: this.log.child({ action: action.name }) })));
      } catch (err) {
        this.error(namespace, `error getting related items from item block action ${action.name} (groupResource=${r.groupResource}, namespace=${namespace ?? ''}, name=${name}): ${(err as Error).message}`);
      }
    }
    let current = item;
    const additional: RelatedItem[] = [];
    for (const action of this.opts.registry.backupActionsFor(r.groupResource, namespace, item.metadata.labels, resolve)) {
      try {
        const out = await action.execute(current, { backup: this.opts.backup, kube: this.opts.kube, log: this.log.child({ action: action.name }) });
        current = out.item;
        additional.push(...out.additionalItems);
        if (out.operationID) this.recordOperation(action.name, r, namespace, name, out.operationID, out.postOperationItems ?? []);
      } catch (err) {
        this.error(namespace, `error executing custom action (groupResource=${r.groupResource}, namespace=${namespace ?? ''}, name=${name}): ${(err as Error).message}`);
        return;
      }
    }
    // Velero reads the request from the item as the actions returned it, for that item's additional items only.
    const additionalMustInclude = current.metadata.annotations?.[Annotations.MustIncludeAdditionalItems] === 'true';
    for (const rel of additional) await this.backupRelated(rel, where, additionalMustInclude);
    if (r.groupResource === PODS && namespace && this.opts.podVolumes) await this.backupPodVolumes(current, namespace);

    await this.opts.archive.addItem({ groupResource: r.groupResource, ...(namespace ? { namespace } : {}), name, version: r.version, object: current });
    this.items.record(r.apiVersion, r.kind, namespace, name);
    if (namespace) this.namespacesWithItems.add(namespace);
    if (r.groupResource === PERSISTENT_VOLUMES) this.volumeInfo.addSkippedPv(current as unknown as PersistentVolumeLike);
    if (r.groupResource === PERSISTENT_VOLUME_CLAIMS) {
      this.volumeInfo.addSkippedPvc(current as unknown as PersistentVolumeClaimLike);
      if (this.opts.volumeSnapshots?.enabled) this.opts.volumeSnapshots.consider(current as unknown as PersistentVolumeClaimItem);
    }
    this.itemsBackedUp++;
    this.reportProgress();
    if (r.groupResource === PODS && namespace) await this.afterPod(item, namespace);
    for (const rel of block) await this.backupRelated(rel, where);
  }

  /** An operation an action started, as Velero records it (phase New, created now); the backup waits for it. */
  private recordOperation(action: string, r: ApiResource, namespace: string | undefined, name: string, operationID: string, post: readonly RelatedItem[]): void {
    const id = (groupResource: string, ns: string | undefined, n: string) => {
      const dot = groupResource.indexOf('.');
      return { Group: dot < 0 ? '' : groupResource.slice(dot + 1), Resource: dot < 0 ? groupResource : groupResource.slice(0, dot), Namespace: ns ?? '', Name: n };
    };
    this.pluginOperations.push({
      spec: {
        backupName: this.opts.backup.metadata?.name ?? '',
        backupUID: this.opts.backup.metadata?.uid ?? '',
        backupItemAction: action,
        resourceIdentifier: id(r.groupResource, namespace, name),
        operationID,
        postOperationItems: post.length ? post.map((p) => id(p.groupResource, p.namespace, p.name)) : null,
      },
      status: { phase: 'New', created: operationTime(this.opts.now?.() ?? new Date()) },
    });
    this.log.info({ action, operationID, resource: r.groupResource, ...(namespace ? { namespace } : {}), name }, 'Item action started an asynchronous operation');
  }

  /** fs-backup of a pod's volumes: PVBs created now, waited for after all items (a problem is an item error). */
  private async backupPodVolumes(pod: UnstructuredObject, namespace: string): Promise<void> {
    const creator = this.opts.podVolumes as PodVolumeBackupCreator;
    try {
      const outcome = await creator.backupPod(pod as unknown as PodLike, { pvcsIncluded: this.policy.acceptsRelated(PERSISTENT_VOLUME_CLAIMS, true), log: this.log });
      for (const s of outcome.skipped) {
        if (s.quiet) this.log.info({ pod: `${namespace}/${pod.metadata.name}`, volume: s.volume }, s.reason);
        else this.warn(namespace, s.reason);
      }
      for (const e of outcome.errors) this.error(namespace, e);
      for (const p of outcome.pvSkips) this.volumeInfo.addPodVolumeSkip(p.pvName, p.reason);
      for (const v of outcome.volumeInfo) this.volumeInfo.addPodVolume(v);
    } catch (err) {
      if (this.opts.signal?.aborted) throw err;
      this.error(namespace, `error backing up the volumes of pod ${namespace}/${pod.metadata.name}: ${(err as Error).message}`);
    }
  }

  private async backupRelated(rel: RelatedItem, from: object, mustInclude = false): Promise<void> {
    if (this.items.has(rel.groupResource, rel.namespace, rel.name)) return;
    const r = this.discovery.byGroupResource(rel.groupResource);
    if (!r) {
      this.warn(rel.namespace, `related item ${rel.groupResource} ${rel.namespace ? `${rel.namespace}/` : ''}${rel.name} cannot be backed up: the cluster does not serve ${rel.groupResource}`);
      return;
    }
    const obj = await this.itemByName(r, rel.name, rel.namespace).catch((err: unknown) => {
      this.error(rel.namespace, `error getting related item ${rel.groupResource} ${rel.namespace ? `${rel.namespace}/` : ''}${rel.name}: ${(err as Error).message}`);
      return undefined;
    });
    if (!obj) {
      this.log.info({ ...from, related: `${rel.groupResource} ${rel.namespace ?? ''}/${rel.name}` }, 'Related item was not found in the cluster; not backing it up');
      return;
    }
    await this.backupItem(r, { ...obj, apiVersion: r.apiVersion, kind: r.kind }, true, mustInclude);
  }

  /**
   * One object, read as a list filtered on its name: backup holds `list` on every resource, never `get` (on `*` that
   * would include sub-resources such as pods/log and nodes/proxy).
   */
  private async itemByName(r: ApiResource, name: string, namespace: string | undefined): Promise<UnstructuredObject | undefined> {
    const list = await this.opts.api.get<RawList>(Discovery.collectionPath(r, namespace), { fieldSelector: `metadata.name=${name}`, limit: 1 });
    return list.items?.[0];
  }

  // ---- bookkeeping --------------------------------------------------------------------------------------------

  private warn(namespace: string | undefined, message: string): void {
    this.results.warn(namespace ? scopeOf(namespace) : { kind: 'velero' }, message);
    this.log.warn(message);
  }

  private error(namespace: string | undefined, message: string): void {
    this.results.error(namespace ? scopeOf(namespace) : { kind: 'velero' }, message);
    this.log.error(message);
  }

  private reportProgress(): void {
    let pending = 0;
    for (const [gr, n] of this.estimates) {
      pending += gr === this.current?.groupResource ? Math.max(0, n - (this.itemsBackedUp - this.current.startedAt)) : n;
    }
    this.opts.onProgress?.({ totalItems: this.itemsBackedUp + pending, itemsBackedUp: this.itemsBackedUp });
  }

  private checkAborted(): void {
    if (this.opts.signal?.aborted) throw new BackupAbortedError();
  }
}

/** The object names of one orderedResources entry (`ns1/pod1,ns1/pod2`), in order. */
export function orderedResourceNames(value: string): string[] {
  return value
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
}

export class BackupAbortedError extends Error {
  constructor() {
    super('backup stopped because the server is shutting down');
  }
}

function podOf(entry: PendingPostHooks): UnstructuredObject {
  return { apiVersion: 'v1', kind: 'Pod', ...pendingPod(entry) };
}
