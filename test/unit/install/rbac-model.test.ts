/**
 * The RBAC model: RBAC's matching rules as the evaluator applies them, and the properties the docs claim, checked
 * against the rules install grants (the cluster test then checks the API server gives the same answers).
 */
import { describe, expect, it } from 'vitest';
import { parseRestoreScope, restoreRulesFor, InvalidRestoreScopeError } from '../../../src/api/restore-scope.js';
import { ACCESS_CHECKS, EXAMPLE_NARROW_SCOPE, accountRules, allowed, describeCheck, ruleAllows, type AccessCheck } from '../../../src/install/rbac-model.js';
import { installManifests } from '../../../src/install/manifests.js';

const check = (c: Partial<AccessCheck> & Pick<AccessCheck, 'verb' | 'resource'>): AccessCheck => ({ group: '', about: '', ...c });
const server = accountRules('server', 'all', 'cairn-restore');
const narrow = accountRules('server', parseRestoreScope([...EXAMPLE_NARROW_SCOPE]), 'cairn-restore');
const agent = accountRules('node-agent', 'all', 'cairn-restore');

describe('RBAC matching', () => {
  it('a * resource matches sub-resources too; a named resource does not', () => {
    expect(ruleAllows({ apiGroups: ['*'], resources: ['*'], verbs: ['get'] }, check({ verb: 'get', resource: 'pods', subresource: 'log' }))).toBe(true);
    expect(ruleAllows({ apiGroups: [''], resources: ['pods'], verbs: ['get'] }, check({ verb: 'get', resource: 'pods', subresource: 'log' }))).toBe(false);
    expect(ruleAllows({ apiGroups: [''], resources: ['*/status'], verbs: ['update'] }, check({ verb: 'update', resource: 'pods', subresource: 'status' }))).toBe(true);
  });

  it('resourceNames never match a request without a name (create)', () => {
    const rule = { apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'], verbs: ['create', 'get'] };
    expect(ruleAllows(rule, check({ verb: 'create', resource: 'configmaps' }))).toBe(false);
    expect(ruleAllows(rule, check({ verb: 'get', resource: 'configmaps', name: 'a' }))).toBe(true);
  });

  it('a namespace rule counts in the install namespace only', () => {
    expect(allowed(agent, check({ verb: 'get', resource: 'pods', subresource: 'log', namespace: 'install' }))).toBe(true);
    expect(allowed(agent, check({ verb: 'get', resource: 'pods', subresource: 'log', namespace: 'other' }))).toBe(false);
  });
});

describe('what cairn holds', () => {
  const never = [
    check({ verb: 'get', resource: 'pods', subresource: 'log', namespace: 'other' }),
    check({ verb: 'get', resource: 'nodes', subresource: 'proxy' }),
    check({ verb: 'create', resource: 'nodes', subresource: 'proxy' }),
    check({ verb: 'create', resource: 'serviceaccounts', subresource: 'token', namespace: 'other' }),
    check({ verb: 'create', resource: 'pods', subresource: 'attach', namespace: 'other' }),
    check({ verb: 'patch', resource: 'pods', subresource: 'ephemeralcontainers', namespace: 'other' }),
    check({ verb: 'impersonate', resource: 'users' }),
    check({ verb: 'get', resource: 'secrets', namespace: 'other' }),
    check({ verb: 'delete', resource: 'namespaces' }),
  ];
  it.each(never.map((c) => [describeCheck(c), c] as const))('no account may %s', (_d, c) => {
    for (const rules of [server, narrow, agent]) expect(allowed(rules, c)).toBe(false);
  });

  it('the default server reads every Secret, restores any kind and RBAC (bind, escalate): cluster-admin equivalent', () => {
    expect(allowed(server, check({ verb: 'list', resource: 'secrets', namespace: 'other' }))).toBe(true);
    expect(allowed(server, check({ verb: 'create', group: 'apps', resource: 'deployments', namespace: 'other' }))).toBe(true);
    expect(allowed(server, check({ verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' }))).toBe(true);
    expect(allowed(server, check({ verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }))).toBe(true);
  });

  it('with a narrow restore scope the server creates only what it lists, and holds no bind or escalate', () => {
    expect(allowed(narrow, check({ verb: 'create', group: 'apps', resource: 'deployments', namespace: 'other' }))).toBe(true);
    expect(allowed(narrow, check({ verb: 'create', resource: 'secrets', namespace: 'other' }))).toBe(false);
    expect(allowed(narrow, check({ verb: 'bind', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }))).toBe(false);
    expect(allowed(narrow, check({ verb: 'update', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'cairn-restore' }))).toBe(false);
  });

  it('every check of the matrix has an answer for every account', () => {
    for (const c of ACCESS_CHECKS) for (const rules of [server, narrow, agent]) expect(typeof allowed(rules, c)).toBe('boolean');
  });
});

describe('the restore scope', () => {
  it('restore rules name top-level resources only, never velero.io or never-restored kinds', () => {
    const rules = restoreRulesFor([
      { group: '', resource: 'pods', verbs: ['create', 'list'], statusUpdatable: true },
      { group: '', resource: 'nodes', verbs: ['create'], statusUpdatable: true },
      { group: '', resource: 'componentstatuses', verbs: ['list'], statusUpdatable: false },
      { group: 'velero.io', resource: 'backups', verbs: ['create'], statusUpdatable: true },
      { group: 'example.com', resource: 'widgets', verbs: ['create'], statusUpdatable: false },
    ]);
    expect(rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['create', 'patch'] },
      { apiGroups: [''], resources: ['pods/status'], verbs: ['update'] },
      { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['create', 'patch'] },
    ]);
  });

  it('refuses sub-resources, wildcards, velero.io and never-restored kinds', () => {
    for (const bad of ['pods/exec', '*', '*.apps', 'backups.velero.io', 'nodes', 'events.events.k8s.io', 'Not A Name']) {
      expect(() => parseRestoreScope([bad]), bad).toThrow(InvalidRestoreScopeError);
    }
    expect(parseRestoreScope(['Deployments.apps', 'configmaps', 'configmaps'])).toEqual([
      { group: 'apps', resource: 'deployments' },
      { group: '', resource: 'configmaps' },
    ]);
  });

  it('install writes the restore role: empty and annotated `all` by default, the listed rules otherwise', () => {
    const byName = (objs: ReturnType<typeof installManifests>['objects'], kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata?.name === name) as { rules?: unknown[]; metadata: { annotations?: Record<string, string> } };
    const all = installManifests({ namespace: 'velero', image: 'i', useNodeAgent: false, defaultVolumesToFsBackup: false }).objects;
    const role = byName(all, 'ClusterRole', 'cairn-restore');
    expect(role.metadata.annotations).toEqual({ 'cairn.io/restore-scope': 'all' });
    expect(role.rules).toBeUndefined();
    expect(byName(all, 'ClusterRoleBinding', 'cairn-restore')).toBeDefined();
    const listed = installManifests({ namespace: 'team', image: 'i', useNodeAgent: false, defaultVolumesToFsBackup: false, restoreScope: parseRestoreScope(['configmaps']) }).objects;
    const narrowRole = byName(listed, 'ClusterRole', 'cairn-restore-team');
    expect(narrowRole.metadata.annotations).toEqual({ 'cairn.io/restore-scope': 'listed' });
    expect(narrowRole.rules).toEqual([
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'patch'] },
      { apiGroups: [''], resources: ['configmaps/status'], verbs: ['update'] },
    ]);
    const serverRole = byName(listed, 'ClusterRole', 'cairn-server-team') as { rules: { verbs: string[] }[] };
    expect(serverRole.rules.some((r) => r.verbs.includes('escalate'))).toBe(false);
  });
});
