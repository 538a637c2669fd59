import { describe, expect, it } from 'vitest';
import type { UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import { createMergePatch, decideExisting, isSubset } from '../../../../src/server/restore/existing.js';

const labels = { 'velero.io/backup-name': 'b', 'velero.io/restore-name': 'r2' };
const desired: UnstructuredObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'app', labels: { app: 'web', ...labels } },
  data: { mode: 'fast' },
};
const inCluster = (over: Partial<UnstructuredObject> = {}, extraLabels: Record<string, string> = {}): UnstructuredObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'app', uid: 'u', resourceVersion: '5', labels: { app: 'web', ...extraLabels } },
  data: { mode: 'fast' },
  ...over,
});

describe('existing resources', () => {
  it('compares as a subset: what the cluster added does not count, what differs does', () => {
    expect(isSubset({ a: 1, b: { c: [1, { d: 2 }] } }, { a: 1, z: 9, b: { c: [1, { d: 2, e: 3 }] } })).toBe(true);
    expect(isSubset({ a: [1, 2] }, { a: [1, 2, 3] })).toBe(false);
    expect(isSubset({ a: 1 }, { a: '1' })).toBe(false);
    expect(isSubset({ a: { b: 1 } }, {})).toBe(false);
  });

  it.each([
    { policy: undefined, want: { action: 'unchanged' } },
    { policy: 'none' as const, want: { action: 'unchanged' } },
    { policy: 'update' as const, want: { action: 'unchanged', patch: { metadata: { labels } } } },
  ])('same as the backup with policy $policy: $want.action', ({ policy, want }) => {
    expect(decideExisting({ policy, desired, inCluster: inCluster() })).toEqual(want);
  });

  it('different: a warning naming the object as Velero does, per policy', () => {
    const changed = inCluster({ data: { mode: 'slow' } });
    expect(decideExisting({ policy: 'none', desired, inCluster: changed })).toEqual({
      action: 'warn',
      message: 'could not restore, ConfigMap "settings" already exists. Warning: the in-cluster version is different than the backed-up version',
    });
    expect(decideExisting({ policy: undefined, desired, inCluster: changed })).toEqual({
      action: 'warn',
      message: 'could not restore, ConfigMap:settings already exists. Warning: the in-cluster version is different than the backed-up version',
    });
  });

  it('different with policy update: a merge patch back to the backup, removing data keys the backup lacks', () => {
    const changed = inCluster({ data: { mode: 'slow', extra: 'x' } }, { added: 'yes' });
    expect(decideExisting({ policy: 'update', desired, inCluster: changed })).toEqual({
      action: 'patch',
      reason: 'existingResourcePolicy is update',
      patch: { metadata: { labels: { ...labels, added: null } }, data: { mode: 'fast', extra: null } },
    });
  });

  it('merge patches never remove fields outside labels, annotations and data (defaults the cluster filled in stay)', () => {
    expect(createMergePatch({ spec: { a: 1, defaulted: true }, data: { x: '1' } }, { spec: { a: 2 }, data: {} })).toEqual({ spec: { a: 2 }, data: { x: null } });
  });

  it('service accounts that differ are merged: secrets and pull secrets united', () => {
    const sa = (secrets: string[], pulls: string[]): UnstructuredObject => ({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'worker', namespace: 'app', labels },
      secrets: secrets.map((name) => ({ name })),
      imagePullSecrets: pulls.map((name) => ({ name })),
    });
    const d = decideExisting({ policy: 'none', desired: sa(['a'], ['reg']), inCluster: sa(['b'], ['reg']) });
    expect(d).toEqual({
      action: 'patch',
      reason: 'service accounts are merged',
      patch: { metadata: { labels, annotations: {} }, secrets: [{ name: 'b' }, { name: 'a' }], imagePullSecrets: [{ name: 'reg' }] },
    });
  });
});
