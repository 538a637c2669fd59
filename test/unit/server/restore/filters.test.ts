import { describe, expect, it } from 'vitest';
import { newRestore, type Restore } from '../../../../src/api/index.js';
import { filterProblems, labelsSelected, namespaceFilter, resourceEntryMatches, resourceFilter, resourceKey } from '../../../../src/server/restore/filters.js';

const restore = (spec: Restore['spec']) => newRestore({ name: 'r', spec });

describe('restore filters', () => {
  it.each([
    ['deployments', 'deployments.apps', 'Deployment', true],
    ['deployments.apps', 'deployments.apps', 'Deployment', true],
    ['deployment', 'deployments.apps', 'Deployment', true],
    ['Deployment', 'deployments.apps', 'Deployment', true],
    ['deployments.extensions', 'deployments.apps', 'Deployment', false],
    ['configmaps', 'configmaps', 'ConfigMap', true],
    ['configmap', 'secrets', 'Secret', false],
    ['*', 'pods', 'Pod', true],
    ['ingress', 'ingresses.networking.k8s.io', 'Ingress', true],
  ])('resource entry %s matches %s: %s', (entry, gr, kind, want) => {
    expect(resourceEntryMatches(entry, gr, kind)).toBe(want);
  });

  it('includes everything but the non-restorable resources by default', () => {
    const f = resourceFilter(restore({ backupName: 'b' }));
    expect(f.shouldInclude(resourceKey('configmaps', 'ConfigMap'))).toBe(true);
    expect(f.shouldInclude(resourceKey('events', 'Event'))).toBe(false);
    expect(f.shouldInclude(resourceKey('nodes', 'Node'))).toBe(false);
    expect(f.shouldInclude(resourceKey('backups.velero.io', 'Backup'))).toBe(false);
  });

  it('applies includes and excludes, excludes winning', () => {
    const f = resourceFilter(restore({ backupName: 'b', includedResources: ['configmaps', 'secrets'], excludedResources: ['secrets'] }));
    expect(f.shouldInclude(resourceKey('configmaps', 'ConfigMap'))).toBe(true);
    expect(f.shouldInclude(resourceKey('secrets', 'Secret'))).toBe(false);
    expect(f.shouldInclude(resourceKey('pods', 'Pod'))).toBe(false);
  });

  it('matches namespace globs as Velero does: `?` one character, `[...]` and `[!...]` one of a set', () => {
    const f = namespaceFilter(restore({ backupName: 'b', includedNamespaces: ['app-?', 'db-[ab]', 'web-[!x]*'], excludedNamespaces: ['app-[0-4]'] }));
    const namespaces = ['app-1', 'app-7', 'app-10', 'app-?', 'db-a', 'db-c', 'web-y1', 'web-x1'];
    expect(namespaces.filter((n) => f.shouldInclude(n))).toEqual(['app-7', 'app-?', 'db-a', 'web-y1']);
  });

  it('filters namespaces with exact names and wildcards', () => {
    const f = namespaceFilter(restore({ backupName: 'b', includedNamespaces: ['app-*', 'db'], excludedNamespaces: ['app-old'] }));
    expect(['app-1', 'db', 'app-old', 'other'].filter((n) => f.shouldInclude(n))).toEqual(['app-1', 'db']);
    expect(namespaceFilter(restore({ backupName: 'b', includedNamespaces: ['*'] })).shouldInclude('x')).toBe(true);
  });

  it('selects by label selector, or by any of the or-selectors', () => {
    const sel = restore({ backupName: 'b', labelSelector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] } });
    expect(labelsSelected({ app: 'web' }, sel)).toBe(true);
    expect(labelsSelected({ app: 'web', tier: 'db' }, sel)).toBe(false);
    expect(labelsSelected(undefined, sel)).toBe(false);
    const or = restore({ backupName: 'b', orLabelSelectors: [{ matchLabels: { a: '1' } }, { matchExpressions: [{ key: 'b', operator: 'Exists' }] }] });
    expect(labelsSelected({ b: 'x' }, or)).toBe(true);
    expect(labelsSelected({ a: '2' }, or)).toBe(false);
    expect(labelsSelected({}, restore({ backupName: 'b' }))).toBe(true);
  });

  it('reports every filter problem', () => {
    expect(
      filterProblems(
        restore({
          backupName: 'b',
          includedResources: ['pods', 'nodes'],
          excludedResources: ['pods', '*'],
          includedNamespaces: ['a'],
          excludedNamespaces: ['a'],
          labelSelector: { matchLabels: { a: 'b' } },
          orLabelSelectors: [{ matchExpressions: [{ key: 'x', operator: 'Near' }] }],
        }),
      ),
    ).toEqual([
      'Invalid included/excluded resource lists: excludes list cannot contain an item in the includes list: pods',
      'Invalid included/excluded resource lists: excludes list cannot contain a wildcard',
      'nodes are non-restorable resources',
      'Invalid included/excluded namespace lists: excludes list cannot contain an item in the includes list: a',
      'encountered labelSelector as well as orLabelSelectors in restore spec, only one can be specified',
      'invalid label selector operator "Near"',
    ]);
  });
});
