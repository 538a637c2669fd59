/**
 * The RBAC model in questions and answers: what each account may do, for a matrix of verbs × resources ×
 * sub-resources that matter (reading Secrets and logs, exec, proxy to nodes, minting tokens, granting roles,
 * impersonating). The answers are computed from the rules in rbac.ts with RBAC's own matching (a `*` resource matches
 * sub-resources too; a Role counts in its namespace only; `resourceNames` never matches a create), docs/rbac.md's
 * table is generated from them, and a cluster test asks the API server the same questions and expects the same
 * answers.
 */
import type { V1PolicyRule } from '@kubernetes/client-node';
import { restoreRulesFor, type ServedResource } from '../api/restore-scope.js';
import { accountRoles, policyRules, restoreScopeRules, type Account, type ExplainedRule, type RestoreScope } from './rbac.js';

export type { Account } from './rbac.js';

/** One question: may the account do `verb` on `resource[/subresource]` in `group`, in which namespace. */
export interface AccessCheck {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  /** `install`: the install namespace; `other`: a workload namespace; absent: cluster-scoped. */
  namespace?: 'install' | 'other';
  name?: string;
  /** What the row is about, for the table. */
  about: string;
}

export const ACCESS_CHECKS: readonly AccessCheck[] = [
  { verb: 'list', group: '', resource: 'secrets', namespace: 'other', about: 'read every Secret (back them up)' },
  { verb: 'get', group: '', resource: 'secrets', namespace: 'other', about: 'read one Secret by name' },
  { verb: 'get', group: '', resource: 'secrets', namespace: 'install', about: 'read its own credentials and repository keys' },
  { verb: 'list', group: 'apps', resource: 'deployments', namespace: 'other', about: 'read workloads (back them up)' },
  { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'other', about: 'restore a workload' },
  { verb: 'create', group: '', resource: 'pods', namespace: 'other', about: 'restore a pod' },
  { verb: 'create', group: '', resource: 'pods', namespace: 'install', about: 'start a data-mover pod' },
  { verb: 'delete', group: '', resource: 'pods', namespace: 'other', about: 'delete a workload pod' },
  { verb: 'delete', group: '', resource: 'namespaces', about: 'delete a namespace' },
  { verb: 'get', group: '', resource: 'pods', subresource: 'log', namespace: 'other', about: 'read a workload pod\'s logs' },
  { verb: 'get', group: '', resource: 'pods', subresource: 'log', namespace: 'install', about: 'read a data-mover pod\'s log' },
  { verb: 'create', group: '', resource: 'pods', subresource: 'exec', namespace: 'other', about: 'exec into a pod (hooks)' },
  { verb: 'get', group: '', resource: 'pods', subresource: 'exec', namespace: 'other', about: 'exec into a pod over a GET upgrade' },
  { verb: 'create', group: '', resource: 'pods', subresource: 'attach', namespace: 'other', about: 'attach to a pod' },
  { verb: 'create', group: '', resource: 'pods', subresource: 'portforward', namespace: 'other', about: 'port-forward into a pod' },
  { verb: 'patch', group: '', resource: 'pods', subresource: 'ephemeralcontainers', namespace: 'other', about: 'add a debug container to a pod' },
  { verb: 'get', group: '', resource: 'nodes', subresource: 'proxy', about: 'reach the kubelet API through nodes/proxy (read)' },
  { verb: 'create', group: '', resource: 'nodes', subresource: 'proxy', about: 'reach the kubelet API through nodes/proxy (write)' },
  { verb: 'create', group: '', resource: 'serviceaccounts', subresource: 'token', namespace: 'other', about: 'mint a token for a service account' },
  { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings', about: 'bind a ClusterRole cluster-wide (restore RBAC)' },
  { verb: 'bind', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', about: 'bind a role holding more than it holds' },
  { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', about: 'write a role holding more than it holds' },
  { verb: 'impersonate', group: '', resource: 'users', about: 'impersonate a user' },
  { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: 'other', about: 'impersonate a service account' },
  { verb: 'create', group: '', resource: 'persistentvolumes', about: 'restore a PersistentVolume' },
  { verb: 'update', group: '', resource: 'persistentvolumes', about: 'hand a restored volume to its claim' },
];

/** A cluster as the model sees it: every resource of the matrix served and creatable, with a status. */
export const MODEL_SERVED: readonly ServedResource[] = [
  ...['secrets', 'pods', 'namespaces', 'nodes', 'persistentvolumes', 'persistentvolumeclaims', 'serviceaccounts', 'configmaps', 'services'].map((resource) => ({
    group: '',
    resource,
    verbs: ['create', 'get', 'list', 'watch', 'patch', 'update', 'delete'],
    statusUpdatable: ['pods', 'namespaces', 'nodes', 'persistentvolumes', 'persistentvolumeclaims', 'services'].includes(resource),
  })),
  { group: 'apps', resource: 'deployments', verbs: ['create', 'get', 'list', 'watch', 'patch', 'update', 'delete'], statusUpdatable: true },
  ...['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'].map((resource) => ({ group: 'rbac.authorization.k8s.io', resource, verbs: ['create', 'get', 'list', 'watch', 'patch', 'update', 'delete'], statusUpdatable: false })),
];

/** The rules an account holds: cluster-wide, and in the install namespace only. */
export interface AccountRules {
  cluster: V1PolicyRule[];
  installNamespace: V1PolicyRule[];
}

/** What install grants, with the `all` scope's restore role as the server would write it for `served`. */
export function accountRules(account: Account, scope: RestoreScope, restoreRole: string, served: readonly ServedResource[] = MODEL_SERVED): AccountRules {
  const roles = accountRoles(account, scope, restoreRole);
  const cluster = policyRules(roles.cluster);
  const installNamespace = policyRules(roles.installNamespace);
  if (account === 'node-agent') return { cluster, installNamespace };
  const restore = scope === 'all' ? restoreRulesFor(served) : policyRules(restoreScopeRules(scope));
  return { cluster: [...cluster, ...restore], installNamespace };
}

/** RBAC's matching of one rule against a request (k8s.io/kubernetes pkg/apis/rbac/v1 evaluation helpers). */
export function ruleAllows(rule: V1PolicyRule, check: Pick<AccessCheck, 'verb' | 'group' | 'resource' | 'subresource' | 'name'>): boolean {
  const has = (list: readonly string[] | undefined, value: string) => (list ?? []).includes('*') || (list ?? []).includes(value);
  if (!has(rule.verbs, check.verb)) return false;
  if (!has(rule.apiGroups, check.group)) return false;
  const combined = check.subresource ? `${check.resource}/${check.subresource}` : check.resource;
  const resources = rule.resources ?? [];
  const resourceOk = resources.some((r) => r === '*' || r === combined || (check.subresource !== undefined && r === `*/${check.subresource}`));
  if (!resourceOk) return false;
  if (rule.resourceNames?.length) return check.name !== undefined && rule.resourceNames.includes(check.name);
  return true;
}

/** The model's answer: a cluster rule allows it anywhere, a namespace rule only in the install namespace. */
export function allowed(rules: AccountRules, check: AccessCheck): boolean {
  if (rules.cluster.some((r) => ruleAllows(r, check))) return true;
  return check.namespace === 'install' && rules.installNamespace.some((r) => ruleAllows(r, check));
}

export function describeCheck(c: AccessCheck): string {
  const res = `${c.resource}${c.subresource ? `/${c.subresource}` : ''}${c.group ? `.${c.group}` : ''}`;
  return `${c.verb} ${res}${c.namespace === 'install' ? ' (install namespace)' : c.namespace === 'other' ? ' (other namespaces)' : ''}`;
}

/** A narrower scope, as the docs and the cluster test use it: workloads and their configuration, no RBAC. */
export const EXAMPLE_NARROW_SCOPE = ['deployments.apps', 'configmaps', 'persistentvolumeclaims', 'services', 'pods'] as const;

/** docs/rbac.md's matrix: one row per check, one column per account (and the server in the narrow scope). */
export function accessMatrixMarkdown(narrow: RestoreScope): string {
  const role = 'cairn-restore';
  const server = accountRules('server', 'all', role);
  const serverNarrow = accountRules('server', narrow, role);
  const agent = accountRules('node-agent', 'all', role);
  const yn = (b: boolean) => (b ? 'yes' : 'no');
  const lines = [
    '| request | what it would do | server | server, narrow restore scope | node agent |',
    '|---|---|---|---|---|',
    ...ACCESS_CHECKS.map((c) => `| \`${describeCheck(c)}\` | ${c.about} | ${yn(allowed(server, c))} | ${yn(allowed(serverNarrow, c))} | ${yn(allowed(agent, c))} |`),
  ];
  return lines.join('\n');
}

/** A rules table (API groups, resources, verbs, why), as docs/rbac.md shows each role. */
export function rulesMarkdown(rules: readonly ExplainedRule[]): string {
  const q = (s: string) => (s === '' ? '""' : s);
  return [
    '| API groups | resources | verbs | why |',
    '|---|---|---|---|',
    ...rules.map(
      (e) =>
        `| ${(e.rule.apiGroups ?? []).map(q).join(', ')} | ${(e.rule.resources ?? []).join(', ')}${e.rule.resourceNames?.length ? ` (only ${e.rule.resourceNames.join(', ')})` : ''} | ${e.rule.verbs.join(', ')} | ${e.why} |`,
    ),
  ].join('\n');
}
