/**
 * What the server and the node agent may do, rule by rule, each with the code path that needs it (docs/rbac.md is
 * generated from these, and a cluster test asks the API server whether it agrees).
 *
 * Two RBAC facts shape them. A rule naming `resources: ["*"]` also matches every sub-resource, so `get` on `*` would
 * read pods/log and reach nodes/proxy, and `create` on `*` would allow pods/exec, pods/attach and
 * serviceaccounts/token; so nothing here grants a verb other than list and watch on `*` (collections have no
 * sub-resources), and what restore may create is a list of named resources (src/api/restore-scope.ts). And `bind`
 * and `escalate` let an account grant any permission, itself included: a server that may restore RBAC objects is as
 * powerful as cluster-admin, which is why the narrower restore scope exists.
 */
import type { V1PolicyRule } from '@kubernetes/client-node';
import { allKindDefinitions } from '../api/kinds.js';
import { restoreRulesForScope, scopeRestoresRbac, type ScopedResource } from '../api/restore-scope.js';

/** An RBAC rule with the reason it is granted; the reason goes into docs, not the API. */
export interface ExplainedRule {
  rule: V1PolicyRule;
  why: string;
}

/** `all`: anything the API server serves (the server keeps the list current); else exactly these resources. */
export type RestoreScope = 'all' | readonly ScopedResource[];

const VELERO_RESOURCES = allKindDefinitions.map((k) => k.plural).sort();

export const SERVER_CLUSTER_RULES: readonly ExplainedRule[] = [
  {
    rule: { apiGroups: ['velero.io'], resources: [...VELERO_RESOURCES, ...VELERO_RESOURCES.map((r) => `${r}/status`)], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    why: 'owns the velero.io resources: reconciles them, writes their status, deletes what a deletion request or expiry removes',
  },
  {
    rule: { apiGroups: ['*'], resources: ['*'], verbs: ['list', 'watch'] },
    why: 'backup lists every resource it is asked to include, Secrets among them; a list never reaches a sub-resource (no logs, exec or proxy), and single objects are read as lists filtered by name',
  },
  {
    rule: { apiGroups: [''], resources: ['pods', 'persistentvolumeclaims', 'persistentvolumes', 'nodes'], verbs: ['get'] },
    why: 'follows a pod to its claims and volumes (fs-backup, snapshots, restore of volumes), checks that the pod behind a repository lock still exists and that a node a restore maps a volume to exists',
  },
  { rule: { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get'] }, why: 'finds the CSI driver of a claim, to pick its VolumeSnapshotClass' },
  { rule: { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshotclasses'], verbs: ['get'] }, why: 'reads the VolumeSnapshotClass a claim or backup names' },
  {
    rule: { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['get', 'create', 'delete'] },
    why: 'takes a VolumeSnapshot of each claim backed up by CSI snapshot; deletes the VolumeSnapshots a backup took once their data is moved or they are stored in the backup, and those of failed or deleted backups',
  },
  {
    rule: { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshotcontents'], verbs: ['get', 'create', 'patch', 'delete'] },
    why: 'reads the snapshot handle of a VolumeSnapshot it took; lets a kept CSI snapshot go from the cluster once it is in the backup (its storage snapshot stays), and deletes the storage snapshot through a temporary content when the backup is deleted',
  },
  {
    rule: { apiGroups: [''], resources: ['pods/exec'], verbs: ['create', 'get'] },
    why: 'runs the backup and restore exec hooks (pod annotations, spec.hooks) in the pods they name, as Velero does; the exec opens as a WebSocket upgrade, a GET, which the API server refused with create alone',
  },
];

/** Only when the restore scope includes RBAC objects (the default scope does). */
export const SERVER_RBAC_RESTORE_RULES: readonly ExplainedRule[] = [
  {
    rule: { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles', 'roles'], verbs: ['bind', 'escalate'] },
    why: 'restores Roles and bindings that grant more than cairn itself holds; this lets the server grant itself anything, so a server that restores RBAC is as powerful as cluster-admin',
  },
];

/** Only in the `all` scope: the server writes the restore role's rules (what the API server serves). */
export function serverRestoreRoleUpkeep(restoreRole: string): ExplainedRule[] {
  return [
    {
      rule: { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: [restoreRole], verbs: ['get', 'update'] },
      why: 'keeps its restore ClusterRole listing every top-level resource the API server serves (new CRDs included), so restore can create any kind without holding a sub-resource',
    },
  ];
}

export const SERVER_NAMESPACE_RULES: readonly ExplainedRule[] = [
  { rule: { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'update'] }, why: 'storage credentials and per-repository key material live in the install namespace' },
  { rule: { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }, why: 'leader election between server replicas' },
  { rule: { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] }, why: 'reports location and repository changes as Events on its own objects' },
  { rule: { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }, why: 'reads its own Deployment for the image the restore-wait init container uses' },
  { rule: { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }, why: 'reads the resource policies and resource modifiers ConfigMaps a backup or restore names' },
];

/** The restore role of a listed scope (the `all` scope's role is written by the server). */
export function restoreScopeRules(scope: RestoreScope): ExplainedRule[] {
  if (scope === 'all') return [];
  return restoreRulesForScope(scope).map((rule) => ({
    rule,
    why: rule.verbs.includes('update') ? 'restoreStatus writes the status of these resources' : 'restore creates these resources; existingResourcePolicy=update patches existing ones',
  }));
}

export function serverClusterRules(scope: RestoreScope, restoreRole: string): ExplainedRule[] {
  return [...SERVER_CLUSTER_RULES, ...(scopeRestoresRbac(scope === 'all' ? 'all' : [...scope]) ? SERVER_RBAC_RESTORE_RULES : []), ...(scope === 'all' ? serverRestoreRoleUpkeep(restoreRole) : [])];
}

export const NODE_AGENT_CLUSTER_RULES: readonly ExplainedRule[] = [
  { rule: { apiGroups: ['velero.io'], resources: ['podvolumebackups', 'podvolumerestores', 'datauploads', 'datadownloads'], verbs: ['get', 'list', 'watch', 'update', 'patch'] }, why: 'claims and runs the data movement work on its node' },
  { rule: { apiGroups: ['velero.io'], resources: ['podvolumebackups/status', 'podvolumerestores/status', 'datauploads/status', 'datadownloads/status'], verbs: ['get', 'update', 'patch'] }, why: 'reports phase and progress of that work' },
  { rule: { apiGroups: ['velero.io'], resources: ['backuprepositories', 'backupstoragelocations'], verbs: ['get', 'list', 'watch'] }, why: 'finds where the data goes' },
  { rule: { apiGroups: [''], resources: ['pods', 'persistentvolumeclaims', 'persistentvolumes', 'nodes'], verbs: ['get', 'list', 'watch'] }, why: 'locates the volume of the workload pod on this node' },
  { rule: { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['update', 'patch'] }, why: 'hands a restored volume over to the workload claim it was restored for (reclaim policy, claimRef)' },
  {
    rule: { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get'] },
    why: "reads the binding mode of a restored claim's class: a WaitForFirstConsumer claim is restored on its workload's node",
  },
  { rule: { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['get', 'list', 'watch'] }, why: 'waits for the snapshot a DataUpload moves to be ready, in the workload namespace' },
  { rule: { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshotcontents'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch', 'update'] }, why: 'reads the snapshot handle and makes a Retain copy of the content to restore the snapshot from' },
];

export const NODE_AGENT_NAMESPACE_RULES: readonly ExplainedRule[] = [
  { rule: { apiGroups: [''], resources: ['pods'], verbs: ['create', 'delete'] }, why: 'starts and removes the backup/restore pods of the data mover, only in the install namespace' },
  { rule: { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }, why: 'collects the data mover logs into its own' },
  { rule: { apiGroups: [''], resources: ['events'], verbs: ['create', 'update', 'patch', 'list', 'watch'] }, why: 'the data mover reports progress through Events on its work item that the node-agent watches' },
  { rule: { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['create', 'delete'] }, why: 'creates and removes the temporary volumes of snapshot data movement, only in the install namespace' },
  { rule: { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['create', 'delete', 'patch', 'update'] }, why: 'creates and removes the snapshot the temporary backup volume is restored from, only in the install namespace' },
  { rule: { apiGroups: [''], resources: ['secrets'], verbs: ['get'] }, why: 'reads storage credentials and repository keys' },
  { rule: { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }, why: 'reads its configuration (concurrency, pod resources)' },
];

export type Account = 'server' | 'node-agent';

/**
 * The rules of the two roles install grants an account: its ClusterRole and its Role in the install namespace. The
 * server's restore role is apart (restoreScopeRules): the server binds it but does not hold it as its own.
 */
export function accountRoles(account: Account, scope: RestoreScope, restoreRole: string): { cluster: readonly ExplainedRule[]; installNamespace: readonly ExplainedRule[] } {
  if (account === 'node-agent') return { cluster: NODE_AGENT_CLUSTER_RULES, installNamespace: NODE_AGENT_NAMESPACE_RULES };
  return { cluster: serverClusterRules(scope, restoreRole), installNamespace: SERVER_NAMESPACE_RULES };
}

/** The RBAC rules alone, as a Role or ClusterRole carries them. */
export function policyRules(explained: readonly ExplainedRule[]): V1PolicyRule[] {
  return explained.map((e) => e.rule);
}
