/**
 * Which items of a backup a Restore takes: namespace and resource include/exclude lists, label selectors, and the
 * resources no restore may bring back. Namespace filters use the item's namespace in the backup (before mapping),
 * as Velero does.
 */
import { globPattern, matchesLabelSelector, type Restore } from '../../api/index.js';
import { splitGroupResource } from '../archive/paths.js';

/** Resources a restore never creates; Velero adds them to `spec.excludedResources`. */
export const NON_RESTORABLE_RESOURCES: readonly string[] = [
  'nodes',
  'events',
  'events.events.k8s.io',
  'backups.velero.io',
  'restores.velero.io',
  'resticrepositories.velero.io',
  'csinodes.storage.k8s.io',
  'volumeattachments.storage.k8s.io',
  'backuprepositories.velero.io',
];

type Selector = NonNullable<Restore['spec']['labelSelector']>;

/** An include/exclude entry against a namespace, as Velero matches them (gobwas/glob: `*`, `?`, `[...]`, `[!...]`). */
function globMatch(pattern: string, value: string): boolean {
  return pattern === '*' || pattern === value || (globPattern(pattern)?.test(value) ?? false);
}

export class IncludesExcludes {
  constructor(
    private readonly includes: readonly string[],
    private readonly excludes: readonly string[],
    private readonly matches: (entry: string, value: string) => boolean = globMatch,
  ) {}

  shouldInclude(value: string): boolean {
    if (this.excludes.some((e) => this.matches(e, value))) return false;
    return this.includes.length === 0 || this.includes.some((i) => this.matches(i, value));
  }
}

/**
 * Whether a user's resource entry names a group-resource. Users write `deployments`, `deployments.apps`,
 * `deployment` or `Deployment`; the archive names `deployments.apps`.
 */
export function resourceEntryMatches(entry: string, groupResource: string, kind?: string): boolean {
  if (entry === '*' || entry === groupResource) return true;
  const { resource, group } = splitGroupResource(groupResource);
  const e = entry.toLowerCase();
  if (e === resource) return true;
  const eDot = e.indexOf('.');
  const eName = eDot < 0 ? e : e.slice(0, eDot);
  const eGroup = eDot < 0 ? undefined : e.slice(eDot + 1);
  if (eGroup !== undefined && eGroup !== group) return false;
  if (kind && eName === kind.toLowerCase()) return true;
  return eName === resource || `${eName}s` === resource || `${eName}es` === resource;
}

export function namespaceFilter(restore: Restore): IncludesExcludes {
  return new IncludesExcludes(restore.spec.includedNamespaces ?? [], restore.spec.excludedNamespaces ?? []);
}

export function resourceFilter(restore: Restore): IncludesExcludes {
  return new IncludesExcludes(
    restore.spec.includedResources ?? [],
    [...(restore.spec.excludedResources ?? []), ...NON_RESTORABLE_RESOURCES],
    (entry, value) => {
      const [gr, kind] = value.split('|');
      return resourceEntryMatches(entry, gr ?? value, kind);
    },
  );
}

/**
 * The resources a Restore excludes, includes apart: shouldInclude() is false for an excluded resource. Telling an
 * excluded resource needs no kind (an entry that matches the group-resource matches it with any kind).
 */
export function resourceExclusions(restore: Restore): IncludesExcludes {
  return new IncludesExcludes([], [...(restore.spec.excludedResources ?? []), ...NON_RESTORABLE_RESOURCES], (entry, value) => resourceEntryMatches(entry, value));
}

/** The key resourceFilter() takes: the group-resource and, if known, the kind. */
export function resourceKey(groupResource: string, kind?: string): string {
  return kind ? `${groupResource}|${kind}` : groupResource;
}

export function matchesSelector(labels: Record<string, string> | undefined, selector: Selector): boolean {
  return matchesLabelSelector(labels, selector);
}

/** `labelSelector`, or any of `orLabelSelectors`; no selector selects everything. */
export function labelsSelected(labels: Record<string, string> | undefined, restore: Restore): boolean {
  const or = restore.spec.orLabelSelectors ?? [];
  if (or.length > 0) return or.some((s) => matchesSelector(labels, s));
  const sel = restore.spec.labelSelector;
  return sel ? matchesSelector(labels, sel) : true;
}

/** Problems with a Restore's filters, as validation messages. */
export function filterProblems(restore: Restore): string[] {
  const problems: string[] = [];
  const inc = restore.spec.includedResources ?? [];
  const exc = restore.spec.excludedResources ?? [];
  const both = inc.filter((r) => r !== '*' && exc.includes(r));
  if (both.length) problems.push(`Invalid included/excluded resource lists: excludes list cannot contain an item in the includes list: ${both.join(', ')}`);
  if (exc.includes('*')) problems.push('Invalid included/excluded resource lists: excludes list cannot contain a wildcard');
  const nonRestorable = inc.filter((r) => r !== '*' && NON_RESTORABLE_RESOURCES.some((n) => resourceEntryMatches(r, n)));
  if (nonRestorable.length) problems.push(`${nonRestorable.join(', ')} are non-restorable resources`);
  const nsInc = restore.spec.includedNamespaces ?? [];
  const nsExc = restore.spec.excludedNamespaces ?? [];
  const nsBoth = nsInc.filter((n) => n !== '*' && nsExc.includes(n));
  if (nsBoth.length) problems.push(`Invalid included/excluded namespace lists: excludes list cannot contain an item in the includes list: ${nsBoth.join(', ')}`);
  if (nsExc.includes('*')) problems.push('Invalid included/excluded namespace lists: excludes list cannot contain a wildcard');
  if (restore.spec.labelSelector && (restore.spec.orLabelSelectors ?? []).length > 0) {
    problems.push('encountered labelSelector as well as orLabelSelectors in restore spec, only one can be specified');
  }
  for (const s of [restore.spec.labelSelector, ...(restore.spec.orLabelSelectors ?? [])]) {
    for (const req of s?.matchExpressions ?? []) {
      if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(req.operator)) problems.push(`invalid label selector operator "${req.operator}"`);
    }
  }
  return problems;
}
