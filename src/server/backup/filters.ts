/**
 * The filters of a Backup spec, with Velero's semantics: include/exclude lists where an empty include list or
 * `*` means everything and an exclude always wins; label selectors (one, or several OR-ed); and the rules for
 * cluster-scoped resources (`includeClusterResources` true/false/nil, or the newer scoped lists).
 */
import { globPattern, matchesLabelSelector, type BackupSpec } from '../../api/index.js';

function entryMatches(entry: string, item: string): boolean {
  if (entry === item) return true;
  return globPattern(entry)?.test(item) ?? false;
}

export class IncludesExcludes {
  readonly includes: readonly string[];
  readonly excludes: readonly string[];

  constructor(includes: readonly string[] | null | undefined, excludes: readonly string[] | null | undefined) {
    this.includes = includes ?? [];
    this.excludes = excludes ?? [];
  }

  get includesAll(): boolean {
    return this.includes.length === 0 || this.includes.includes('*');
  }

  /** Everything and nothing excluded (Velero's IncludeEverything). */
  get includesEverything(): boolean {
    return this.includesAll && this.excludes.length === 0;
  }

  shouldInclude(item: string): boolean {
    if (this.excludes.some((e) => entryMatches(e, item))) return false;
    return this.includesAll || this.includes.some((i) => entryMatches(i, item));
  }

  /** Whether an include entry is a pattern rather than a name. */
  static isPattern(entry: string): boolean {
    return globPattern(entry) !== undefined;
  }
}

/** Velero's reasons for an include/exclude pair that makes no sense. */
export function includesExcludesProblems(includes: readonly string[] | null | undefined, excludes: readonly string[] | null | undefined): string[] {
  const inc = includes ?? [];
  const exc = excludes ?? [];
  const problems: string[] = [];
  if (inc.length > 1 && inc.includes('*')) problems.push("includes list must either contain '*' only, or a non-empty list of items");
  if (exc.includes('*')) problems.push("excludes list cannot contain '*'");
  for (const item of exc) {
    if (item !== '*' && inc.includes(item)) problems.push(`excludes list cannot contain an item in the includes list: ${item}`);
  }
  return problems;
}

// ---- label selectors ------------------------------------------------------------------------------------------

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: readonly string[];
}
export interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: readonly LabelSelectorRequirement[];
}

export type LabelMatcher = (labels: Record<string, string> | undefined) => boolean;

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

export function labelSelectorProblems(sel: LabelSelectorSpec): string[] {
  const problems: string[] = [];
  for (const e of sel.matchExpressions ?? []) {
    if (!(OPERATORS as readonly string[]).includes(e.operator)) {
      problems.push(`"${e.operator}" is not a valid label selector operator`);
    } else if ((e.operator === 'In' || e.operator === 'NotIn') && !(e.values?.length)) {
      problems.push(`values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty (key ${e.key})`);
    } else if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && e.values?.length) {
      problems.push(`values: Invalid value: ${JSON.stringify(e.values)}: values set must be empty for exists and does not exist (key ${e.key})`);
    }
  }
  return problems;
}

/** A selector as a predicate; an empty selector matches everything (as in Kubernetes). */
export function labelMatcher(sel: LabelSelectorSpec): LabelMatcher {
  return (labels) => matchesLabelSelector(labels, sel);
}

/** The selector in the API's string form (for server-side filtering of lists). */
export function labelSelectorString(sel: LabelSelectorSpec): string {
  const parts = Object.entries(sel.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/** labelSelector, or any of orLabelSelectors, or everything. */
export function backupLabelMatcher(spec: Pick<BackupSpec, 'labelSelector' | 'orLabelSelectors'>): LabelMatcher {
  if (spec.labelSelector) return labelMatcher(spec.labelSelector);
  const ors = spec.orLabelSelectors ?? [];
  if (ors.length === 0) return () => true;
  const matchers = ors.map(labelMatcher);
  return (labels) => matchers.some((m) => m(labels));
}

// ---- resources and scope --------------------------------------------------------------------------------------

/** Never backed up: the cluster's own bookkeeping and cairn/Velero's own work objects. */
export const NEVER_BACKED_UP: ReadonlySet<string> = new Set([
  'events',
  'events.events.k8s.io',
  'nodes',
  'csinodes.storage.k8s.io',
  'volumeattachments.storage.k8s.io',
  'componentstatuses',
  'backups.velero.io',
  'restores.velero.io',
  'resticrepositories.velero.io',
  'backuprepositories.velero.io',
  'podvolumebackups.velero.io',
  'podvolumerestores.velero.io',
  'datauploads.velero.io',
  'datadownloads.velero.io',
  'deletebackuprequests.velero.io',
  'downloadrequests.velero.io',
  'serverstatusrequests.velero.io',
  // Velero excludes these from every backup's resource filters, whatever the Backup's spec says.
  'volumesnapshots.snapshot.storage.k8s.io',
  'volumesnapshotcontents.snapshot.storage.k8s.io',
]);

export const NAMESPACES = 'namespaces';
export const PERSISTENT_VOLUMES = 'persistentvolumes';
export const PERSISTENT_VOLUME_CLAIMS = 'persistentvolumeclaims';
export const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';

/** Whether the spec uses the newer scoped resource filters. */
export function usesScopedFilters(spec: Pick<BackupSpec, 'includedClusterScopedResources' | 'excludedClusterScopedResources' | 'includedNamespaceScopedResources' | 'excludedNamespaceScopedResources'>): boolean {
  return [spec.includedClusterScopedResources, spec.excludedClusterScopedResources, spec.includedNamespaceScopedResources, spec.excludedNamespaceScopedResources].some(
    (l) => (l?.length ?? 0) > 0,
  );
}

export function usesOldResourceFilters(spec: BackupSpec): boolean {
  return (spec.includedResources?.length ?? 0) > 0 || (spec.excludedResources?.length ?? 0) > 0 || (spec.includeClusterResources ?? null) !== null;
}

/** The four scoped resource lists (of a Backup spec, or of resource policies' includeExcludePolicy). */
export interface ScopedFilterLists {
  includedClusterScopedResources: string[];
  excludedClusterScopedResources: string[];
  includedNamespaceScopedResources: string[];
  excludedNamespaceScopedResources: string[];
}

/**
 * The spec's scoped lists with the policy's added, as Velero combines them: an entry of the policy counts only when
 * the spec's lists of the same scope neither include nor exclude it already (the spec wins; `*` matches all).
 */
export function combineScopedFilters(spec: ScopedFilterLists, policy: ScopedFilterLists | undefined): ScopedFilterLists {
  if (!policy) return spec;
  const out: ScopedFilterLists = {
    includedClusterScopedResources: [...spec.includedClusterScopedResources],
    excludedClusterScopedResources: [...spec.excludedClusterScopedResources],
    includedNamespaceScopedResources: [...spec.includedNamespaceScopedResources],
    excludedNamespaceScopedResources: [...spec.excludedNamespaceScopedResources],
  };
  const matches = (list: readonly string[], item: string) => list.includes('*') || list.includes(item);
  const add = (scope: 'ClusterScoped' | 'NamespaceScoped') => {
    const inc = out[`included${scope}Resources`];
    const exc = out[`excluded${scope}Resources`];
    const specInc = [...inc];
    const specExc = [...exc];
    for (const item of policy[`excluded${scope}Resources`]) if (!matches(specInc, item) && !matches(specExc, item) && !exc.includes(item)) exc.push(item);
    for (const item of policy[`included${scope}Resources`]) if (!matches(specInc, item) && !matches(specExc, item) && !inc.includes(item)) inc.push(item);
  };
  add('NamespaceScoped');
  add('ClusterScoped');
  return out;
}

/**
 * Decides, per group-resource, whether a backup takes it. Entries of the spec's resource lists are resolved to
 * group-resources by `resolve` (discovery) first.
 */
export class ResourcePolicy {
  private readonly old: IncludesExcludes;
  private readonly namespaced: IncludesExcludes;
  private readonly cluster: IncludesExcludes;
  readonly scoped: boolean;

  constructor(
    private readonly spec: BackupSpec,
    private readonly namespaces: IncludesExcludes,
    resolve: (name: string) => string = (n) => n,
    /** The resource policies' scoped filters: added where the spec's own lists say nothing (Velero's CombineWithPolicy). */
    policy?: ScopedFilterLists,
  ) {
    const r = (l: readonly string[] | null | undefined) => (l ?? []).map((x) => (x === '*' ? x : resolve(x)));
    const combined = combineScopedFilters(
      {
        includedNamespaceScopedResources: r(spec.includedNamespaceScopedResources),
        excludedNamespaceScopedResources: r(spec.excludedNamespaceScopedResources),
        includedClusterScopedResources: r(spec.includedClusterScopedResources),
        excludedClusterScopedResources: r(spec.excludedClusterScopedResources),
      },
      policy && {
        includedNamespaceScopedResources: r(policy.includedNamespaceScopedResources),
        excludedNamespaceScopedResources: r(policy.excludedNamespaceScopedResources),
        includedClusterScopedResources: r(policy.includedClusterScopedResources),
        excludedClusterScopedResources: r(policy.excludedClusterScopedResources),
      },
    );
    this.scoped = usesScopedFilters(combined);
    this.old = new IncludesExcludes(r(spec.includedResources), r(spec.excludedResources));
    this.namespaced = new IncludesExcludes(combined.includedNamespaceScopedResources.length ? combined.includedNamespaceScopedResources : ['*'], combined.excludedNamespaceScopedResources);
    this.cluster = new IncludesExcludes(combined.includedClusterScopedResources, combined.excludedClusterScopedResources);
  }

  /** Whether items of this resource are collected (listed) at all. */
  collects(gr: string, namespaced: boolean): boolean {
    if (NEVER_BACKED_UP.has(gr)) return false;
    if (namespaced) return this.scoped ? this.namespaced.shouldInclude(gr) : this.old.shouldInclude(gr);
    if (gr === NAMESPACES) return this.scoped ? true : this.old.shouldInclude(gr);
    if (this.scoped) return this.cluster.includes.length > 0 && this.cluster.shouldInclude(gr);
    if (!this.old.shouldInclude(gr)) return false;
    const icr = this.spec.includeClusterResources;
    if (icr === true) return true;
    if (icr === false) return false;
    // nil: cluster-scoped resources only for a backup of every namespace; otherwise only as related items.
    return this.namespaces.includesEverything;
  }

  /** Whether an item another item needs (a PVC's PV, a CR's CRD) may be added. */
  acceptsRelated(gr: string, namespaced: boolean): boolean {
    if (NEVER_BACKED_UP.has(gr)) return false;
    if (namespaced) return this.scoped ? this.namespaced.shouldInclude(gr) : this.old.shouldInclude(gr);
    if (this.scoped) return !this.cluster.excludes.includes(gr);
    if (this.spec.includeClusterResources === false) return false;
    return this.old.shouldInclude(gr);
  }
}
