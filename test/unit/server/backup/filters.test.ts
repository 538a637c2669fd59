import { describe, expect, it } from 'vitest';
import {
  IncludesExcludes,
  ResourcePolicy,
  backupLabelMatcher,
  includesExcludesProblems,
  labelMatcher,
  labelSelectorProblems,
  labelSelectorString,
} from '../../../../src/server/backup/filters.js';

describe('IncludesExcludes (Velero semantics)', () => {
  it.each([
    { inc: [], exc: [], item: 'a', want: true },
    { inc: ['*'], exc: [], item: 'a', want: true },
    { inc: ['a'], exc: [], item: 'a', want: true },
    { inc: ['a'], exc: [], item: 'b', want: false },
    { inc: ['*'], exc: ['a'], item: 'a', want: false },
    { inc: [], exc: ['a'], item: 'b', want: true },
  ])('includes=$inc excludes=$exc: $item → $want', ({ inc, exc, item, want }) => {
    expect(new IncludesExcludes(inc, exc).shouldInclude(item)).toBe(want);
  });

  it('includes everything only with no excludes', () => {
    expect(new IncludesExcludes(['*'], []).includesEverything).toBe(true);
    expect(new IncludesExcludes(null, undefined).includesEverything).toBe(true);
    expect(new IncludesExcludes(['*'], ['kube-system']).includesEverything).toBe(false);
    expect(new IncludesExcludes(['app'], []).includesEverything).toBe(false);
  });

  it.each([
    { inc: ['a', 'b'], exc: ['c'], want: [] },
    { inc: ['*', 'a'], exc: [], want: ["includes list must either contain '*' only, or a non-empty list of items"] },
    { inc: [], exc: ['*'], want: ["excludes list cannot contain '*'"] },
    { inc: ['a', 'b'], exc: ['b'], want: ['excludes list cannot contain an item in the includes list: b'] },
  ])('problems of includes=$inc excludes=$exc', ({ inc, exc, want }) => {
    expect(includesExcludesProblems(inc, exc)).toEqual(want);
  });
});

describe('label selectors', () => {
  const sel = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }, { key: 'skip', operator: 'DoesNotExist' }] };
  it.each<{ labels: Record<string, string> | undefined; want: boolean }>([
    { labels: { app: 'web', tier: 'front' }, want: true },
    { labels: { app: 'web', tier: 'db' }, want: false },
    { labels: { app: 'web', tier: 'back', skip: 'y' }, want: false },
    { labels: { tier: 'front' }, want: false },
    { labels: undefined, want: false },
  ])('$labels → $want', ({ labels, want }) => {
    expect(labelMatcher(sel)(labels)).toBe(want);
  });

  it('NotIn and Exists', () => {
    const m = labelMatcher({ matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }, { key: 'app', operator: 'Exists' }] });
    expect(m({ app: 'x' })).toBe(true);
    expect(m({ app: 'x', env: 'dev' })).toBe(true);
    expect(m({ app: 'x', env: 'prod' })).toBe(false);
    expect(m({ env: 'dev' })).toBe(false);
  });

  it('renders the API string form', () => {
    expect(labelSelectorString(sel)).toBe('app=web,tier in (back,front),!skip');
  });

  it('ORs orLabelSelectors, and matches everything without selectors', () => {
    const m = backupLabelMatcher({ orLabelSelectors: [{ matchLabels: { a: '1' } }, { matchLabels: { b: '2' } }] });
    expect(m({ a: '1' })).toBe(true);
    expect(m({ b: '2' })).toBe(true);
    expect(m({ c: '3' })).toBe(false);
    expect(backupLabelMatcher({})(undefined)).toBe(true);
  });

  it('reports bad operators and value sets', () => {
    expect(labelSelectorProblems({ matchExpressions: [{ key: 'a', operator: 'Like' }] })).toHaveLength(1);
    expect(labelSelectorProblems({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] })).toHaveLength(1);
    expect(labelSelectorProblems({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).toHaveLength(1);
    expect(labelSelectorProblems({ matchExpressions: [{ key: 'a', operator: 'Exists' }] })).toEqual([]);
  });
});

describe('ResourcePolicy: which resources a backup collects', () => {
  const all = new IncludesExcludes(['*'], []);
  const some = new IncludesExcludes(['app'], []);
  it.each([
    { name: 'namespaced resource, defaults', spec: {}, ns: all, gr: 'pods', namespaced: true, want: true },
    { name: 'never: events', spec: {}, ns: all, gr: 'events', namespaced: true, want: false },
    { name: 'never: nodes', spec: { includeClusterResources: true }, ns: all, gr: 'nodes', namespaced: false, want: false },
    { name: 'never: velero backups', spec: {}, ns: all, gr: 'backups.velero.io', namespaced: true, want: false },
    { name: 'cluster-scoped, nil, all namespaces', spec: {}, ns: all, gr: 'persistentvolumes', namespaced: false, want: true },
    { name: 'cluster-scoped, nil, some namespaces', spec: {}, ns: some, gr: 'persistentvolumes', namespaced: false, want: false },
    { name: 'cluster-scoped, true, some namespaces', spec: { includeClusterResources: true }, ns: some, gr: 'persistentvolumes', namespaced: false, want: true },
    { name: 'cluster-scoped, false', spec: { includeClusterResources: false }, ns: all, gr: 'clusterroles.rbac.authorization.k8s.io', namespaced: false, want: false },
    { name: 'namespaces with some namespaces', spec: {}, ns: some, gr: 'namespaces', namespaced: false, want: true },
    { name: 'namespaces with cluster resources off', spec: { includeClusterResources: false }, ns: some, gr: 'namespaces', namespaced: false, want: true },
    { name: 'included resources', spec: { includedResources: ['configmaps'] }, ns: all, gr: 'secrets', namespaced: true, want: false },
    { name: 'excluded resources', spec: { excludedResources: ['secrets'] }, ns: all, gr: 'secrets', namespaced: true, want: false },
    { name: 'scoped: cluster listed', spec: { includedClusterScopedResources: ['persistentvolumes'] }, ns: some, gr: 'persistentvolumes', namespaced: false, want: true },
    { name: 'scoped: cluster not listed', spec: { includedClusterScopedResources: ['persistentvolumes'] }, ns: all, gr: 'clusterroles.rbac.authorization.k8s.io', namespaced: false, want: false },
    { name: 'scoped: namespaced excluded', spec: { excludedNamespaceScopedResources: ['secrets'] }, ns: all, gr: 'secrets', namespaced: true, want: false },
  ])('$name', ({ spec, ns, gr, namespaced, want }) => {
    expect(new ResourcePolicy(spec, ns).collects(gr, namespaced)).toBe(want);
  });

  it.each([
    { name: 'PV of an included PVC, nil', spec: {}, gr: 'persistentvolumes', namespaced: false, want: true },
    { name: 'PV with cluster resources off', spec: { includeClusterResources: false }, gr: 'persistentvolumes', namespaced: false, want: false },
    { name: 'PV excluded by resource filter', spec: { excludedResources: ['persistentvolumes'] }, gr: 'persistentvolumes', namespaced: false, want: false },
    { name: 'CRD, scoped filters not excluding it', spec: { includedNamespaceScopedResources: ['*'] }, gr: 'customresourcedefinitions.apiextensions.k8s.io', namespaced: false, want: true },
  ])('related: $name', ({ spec, gr, namespaced, want }) => {
    expect(new ResourcePolicy(spec, some).acceptsRelated(gr, namespaced)).toBe(want);
  });

  it('resolves short names through the given resolver', () => {
    const p = new ResourcePolicy({ includedResources: ['deploy'] }, all, (n) => (n === 'deploy' ? 'deployments.apps' : n));
    expect(p.collects('deployments.apps', true)).toBe(true);
    expect(p.collects('pods', true)).toBe(false);
  });
});
