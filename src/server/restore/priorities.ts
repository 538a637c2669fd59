/**
 * The order resources are restored in (docs/restore.md): Velero's high-priority list first (CRDs and
 * namespaces, then what other objects depend on: storage classes, volumes, RBAC, secrets, config maps, pods …),
 * then every other resource in the backup alphabetically by `resource.group`, then the low-priority list.
 */
export const HIGH_PRIORITIES: readonly string[] = [
  'customresourcedefinitions',
  'namespaces',
  'storageclasses',
  'volumesnapshotclass.snapshot.storage.k8s.io',
  'volumesnapshotcontents.snapshot.storage.k8s.io',
  'volumesnapshots.snapshot.storage.k8s.io',
  'datauploads.velero.io',
  'persistentvolumes',
  'persistentvolumeclaims',
  'clusterroles',
  'roles',
  'serviceaccounts',
  'clusterrolebindings',
  'rolebindings',
  'secrets',
  'configmaps',
  'limitranges',
  'priorityclasses',
  'pods',
  'replicasets.apps',
  'clusterclasses.cluster.x-k8s.io',
  'endpoints',
  'services',
];

export const LOW_PRIORITIES: readonly string[] = [
  'clusterbootstraps.run.tanzu.vmware.com',
  'clusters.cluster.x-k8s.io',
  'clusterresourcesets.addons.cluster.x-k8s.io',
  'apps.kappctrl.k14s.io',
  'packageinstalls.packaging.carvel.dev',
];

/**
 * Short names in Velero's list mean the core or well-known group; the archive names them fully
 * (`customresourcedefinitions.apiextensions.k8s.io`). This maps an archive group-resource to its list entry.
 */
const LIST_ALIASES: Record<string, string> = {
  'customresourcedefinitions.apiextensions.k8s.io': 'customresourcedefinitions',
  'storageclasses.storage.k8s.io': 'storageclasses',
  'volumesnapshotclasses.snapshot.storage.k8s.io': 'volumesnapshotclass.snapshot.storage.k8s.io',
  'clusterroles.rbac.authorization.k8s.io': 'clusterroles',
  'roles.rbac.authorization.k8s.io': 'roles',
  'clusterrolebindings.rbac.authorization.k8s.io': 'clusterrolebindings',
  'rolebindings.rbac.authorization.k8s.io': 'rolebindings',
  'priorityclasses.scheduling.k8s.io': 'priorityclasses',
};

export function priorityName(groupResource: string): string {
  return LIST_ALIASES[groupResource] ?? groupResource;
}

export interface RestorePriorities {
  high: readonly string[];
  low: readonly string[];
}

export const DEFAULT_RESTORE_PRIORITIES: RestorePriorities = { high: HIGH_PRIORITIES, low: LOW_PRIORITIES };

/** The group-resources present in a backup, in the order they are restored; each appears once. */
export function orderGroupResources(present: Iterable<string>, priorities: RestorePriorities = DEFAULT_RESTORE_PRIORITIES): string[] {
  const all = [...new Set(present)];
  const rank = (list: readonly string[], gr: string) => list.indexOf(priorityName(gr));
  const high = all.filter((gr) => rank(priorities.high, gr) >= 0).sort((a, b) => rank(priorities.high, a) - rank(priorities.high, b));
  const low = all.filter((gr) => rank(priorities.high, gr) < 0 && rank(priorities.low, gr) >= 0).sort((a, b) => rank(priorities.low, a) - rank(priorities.low, b));
  const middle = all.filter((gr) => !high.includes(gr) && !low.includes(gr)).sort();
  return [...high, ...middle, ...low];
}

export function isCrdResource(groupResource: string): boolean {
  return priorityName(groupResource) === 'customresourcedefinitions';
}
