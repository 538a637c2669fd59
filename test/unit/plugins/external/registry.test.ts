import { describe, expect, it } from 'vitest';
import { appliesTo, ItemActionRegistry } from '../../../../src/plugins/item-actions/registry.js';
import type { BackupItemAction } from '../../../../src/plugins/item-actions/types.js';

const action = (name: string, selector: ReturnType<BackupItemAction['appliesTo']>): BackupItemAction => ({
  name,
  appliesTo: () => selector,
  execute: async (item) => ({ item, additionalItems: [] }),
});

describe('resource selectors', () => {
  const resolve = (n: string) => ({ pod: 'pods', deploy: 'deployments.apps', cm: 'configmaps' })[n];

  it.each([
    [{ includedResources: ['*'] }, { groupResource: 'pods', namespace: 'a' }, true],
    [{ includedResources: ['pod'] }, { groupResource: 'pods' }, true],
    [{ includedResources: ['deploy'] }, { groupResource: 'deployments.apps' }, true],
    [{ includedResources: ['pods'] }, { groupResource: 'configmaps' }, false],
    [{ includedResources: ['*'], excludedResources: ['cm'] }, { groupResource: 'configmaps' }, false],
    [{ includedResources: ['*'], includedNamespaces: ['a'] }, { groupResource: 'pods', namespace: 'b' }, false],
    [{ includedResources: ['*'], includedNamespaces: ['a'] }, { groupResource: 'nodes' }, true],
    [{ includedResources: ['*'], excludedNamespaces: ['b'] }, { groupResource: 'pods', namespace: 'b' }, false],
    [{ includedResources: ['*'], labelSelector: { matchExpressions: [{ key: 'x', operator: 'Exists' }] } }, { groupResource: 'pods', labels: { x: '1' } }, true],
    [{ includedResources: ['*'], labelSelector: { matchLabels: { x: '2' } } }, { groupResource: 'pods', labels: { x: '1' } }, false],
  ])('%j sees %j: %s', (selector, item, expected) => {
    expect(appliesTo(selector, item, resolve)).toBe(expected);
  });
});

describe('registering actions', () => {
  it('refuses a second action under a name unless it replaces the first in its place', () => {
    const registry = new ItemActionRegistry().registerBackupAction(action('velero.io/pod', { includedResources: ['pods'] })).registerBackupAction(action('b', { includedResources: ['*'] }));
    expect(() => registry.registerBackupAction(action('velero.io/pod', { includedResources: ['*'] }))).toThrow(/registered twice/);
    const copy = registry.copy().registerBackupAction(action('velero.io/pod', { includedResources: ['configmaps'] }), { replace: true });
    expect(copy.names.backup).toEqual(['velero.io/pod', 'b']);
    expect(copy.backupActionsFor('configmaps').map((a) => a.name)).toEqual(['velero.io/pod', 'b']);
    // The original is untouched.
    expect(registry.backupActionsFor('configmaps').map((a) => a.name)).toEqual(['b']);
  });

  it('lists every action with its Velero kind', () => {
    const registry = new ItemActionRegistry()
      .registerBackupAction({ ...action('x.io/v2', { includedResources: ['*'] }), pluginKind: 'BackupItemActionV2' })
      .registerDeleteAction({ name: 'x.io/del', appliesTo: () => ({ includedResources: ['*'] }), execute: async () => undefined })
      .registerItemBlockAction({ name: 'x.io/block', appliesTo: () => ({ includedResources: ['*'] }), getRelatedItems: async () => [] });
    expect(registry.listed).toEqual([
      { name: 'x.io/v2', kind: 'BackupItemActionV2' },
      { name: 'x.io/del', kind: 'DeleteItemAction' },
      { name: 'x.io/block', kind: 'ItemBlockAction' },
    ]);
  });
});
