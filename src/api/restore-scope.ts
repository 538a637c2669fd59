/**
 * What restore may create, as RBAC rules. Restoring "anything" means creating any kind the API server serves,
 * custom resources included; RBAC cannot say "every resource but none of its sub-resources" (`resources: ["*"]`
 * also matches pods/exec, pods/attach, pods/ephemeralcontainers, serviceaccounts/token, nodes/proxy...), so the
 * server names every top-level resource the API server serves in a ClusterRole of its own and keeps that list
 * current (src/server/rbac/restore-role.ts). With a restore scope chosen at install, the role lists only those
 * resources and the server leaves it alone.
 *
 * Shared by install (which writes the role) and the server (which keeps it current), so both build the same rules.
 */
import type { V1PolicyRule } from '@kubernetes/client-node';

/** Annotation on the restore ClusterRole: `all` when the server keeps it current, `listed` when install wrote it. */
export const RESTORE_SCOPE_ANNOTATION = 'cairn.io/restore-scope';

/** Group-resources a restore never creates (Velero's list, plus the API's review and binding requests). */
export const NEVER_RESTORED: readonly string[] = [
  'nodes',
  'events',
  'events.events.k8s.io',
  'csinodes.storage.k8s.io',
  'volumeattachments.storage.k8s.io',
  'bindings',
  'componentstatuses',
  'tokenreviews.authentication.k8s.io',
  'selfsubjectreviews.authentication.k8s.io',
  'subjectaccessreviews.authorization.k8s.io',
  'selfsubjectaccessreviews.authorization.k8s.io',
  'selfsubjectrulesreviews.authorization.k8s.io',
  'localsubjectaccessreviews.authorization.k8s.io',
];

/** One resource the API server serves, as discovery lists it. */
export interface ServedResource {
  /** '' for the core group. */
  group: string;
  /** Plural name, never a sub-resource. */
  resource: string;
  verbs: readonly string[];
  /** The resource has a `status` sub-resource that takes updates (restoreStatus writes it). */
  statusUpdatable: boolean;
}

const groupResource = (group: string, resource: string) => (group ? `${resource}.${group}` : resource);

/** velero.io objects are the server's own (its cluster rule); restore never recreates those Velero excludes. */
function restorable(r: ServedResource): boolean {
  if (!r.verbs.includes('create')) return false;
  if (r.group === 'velero.io') return false;
  return !NEVER_RESTORED.includes(groupResource(r.group, r.resource));
}

/**
 * The restore rules for these resources: create and patch (existingResourcePolicy=update) on each top-level
 * resource, update on its `status` (restoreStatus); one rule per API group, resources sorted, so the role compares
 * equal when nothing changed.
 */
export function restoreRulesFor(served: readonly ServedResource[]): V1PolicyRule[] {
  const byGroup = new Map<string, { resources: Set<string>; status: Set<string> }>();
  for (const r of served) {
    if (!restorable(r)) continue;
    const g = byGroup.get(r.group) ?? { resources: new Set<string>(), status: new Set<string>() };
    g.resources.add(r.resource);
    if (r.statusUpdatable) g.status.add(`${r.resource}/status`);
    byGroup.set(r.group, g);
  }
  const rules: V1PolicyRule[] = [];
  for (const group of [...byGroup.keys()].sort()) {
    const g = byGroup.get(group)!;
    rules.push({ apiGroups: [group], resources: [...g.resources].sort(), verbs: ['create', 'patch'] });
    if (g.status.size) rules.push({ apiGroups: [group], resources: [...g.status].sort(), verbs: ['update'] });
  }
  return rules;
}

/** A resource named in `--restore-resources`: `deployments.apps`, `configmaps`, `widgets.example.com`. */
export interface ScopedResource {
  group: string;
  resource: string;
}

export class InvalidRestoreScopeError extends Error {
  override name = 'InvalidRestoreScopeError';
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Parses `resource[.group]` entries; sub-resources and wildcards are refused (they would widen, not narrow). */
export function parseRestoreScope(entries: readonly string[]): ScopedResource[] {
  const out: ScopedResource[] = [];
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry.includes('/') || entry.includes('*')) throw new InvalidRestoreScopeError(`restore scope entry "${raw}": name a resource as resource[.group] (no sub-resources, no wildcards)`);
    const dot = entry.indexOf('.');
    const resource = dot < 0 ? entry : entry.slice(0, dot);
    const group = dot < 0 ? '' : entry.slice(dot + 1);
    if (!NAME.test(resource) || (group && !group.split('.').every((p) => NAME.test(p)))) throw new InvalidRestoreScopeError(`restore scope entry "${raw}" is not a resource[.group] name`);
    if (group === 'velero.io') throw new InvalidRestoreScopeError(`restore scope entry "${raw}": velero.io resources are never restored`);
    if (NEVER_RESTORED.includes(groupResource(group, resource))) throw new InvalidRestoreScopeError(`restore scope entry "${raw}": ${groupResource(group, resource)} is never restored`);
    if (!out.some((o) => o.group === group && o.resource === resource)) out.push({ group, resource });
  }
  if (!out.length) throw new InvalidRestoreScopeError('the restore scope names no resource');
  return out;
}

/** Rules for a listed scope: the same shape as for discovered resources (status updates included). */
export function restoreRulesForScope(scope: readonly ScopedResource[]): V1PolicyRule[] {
  return restoreRulesFor(scope.map((s) => ({ group: s.group, resource: s.resource, verbs: ['create'], statusUpdatable: true })));
}

/** True when the scope lets restore create RBAC objects, which needs bind and escalate (see docs/rbac.md). */
export function scopeRestoresRbac(scope: readonly ScopedResource[] | 'all'): boolean {
  return scope === 'all' || scope.some((s) => s.group === 'rbac.authorization.k8s.io');
}
