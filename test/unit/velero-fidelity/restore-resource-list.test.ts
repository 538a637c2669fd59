/**
 * Golden: the restore's resource list (`restore-<name>-resource-list.json.gz`, shown by `restore describe
 * --details`) against what Velero 1.17 writes for the same cluster. Velero's rule (pkg/restore/restore.go): an
 * item is `created` or `updated` when that happened; otherwise `skipped` if restoring it raised no warning or error
 * and `failed` if it did; entries are `ns/name(action)` sorted per `<apiVersion>/<Kind>`; a namespace is listed
 * only when the restore created it.
 */
import { restoreRunOptions } from '../../support/restore-run.js';
import { describe, expect, it } from 'vitest';
import { newBackup, newRestore, type Restore } from '../../../src/api/index.js';
import type { UnstructuredObject } from '../../../src/plugins/item-actions/types.js';
import type { ArchiveItem } from '../../../src/server/archive/reader.js';
import { ResultsCollector } from '../../../src/api/results.js';
import { ApiError } from '../../../src/server/restore/dynamic-client.js';
import { listedOutcome, runRestore } from '../../../src/server/restore/restorer.js';
import { FakeCluster } from '../server/restore/fake-object-client.js';
import { describePlainRestore } from '../cli/describe/fixtures.js';

const cm = (name: string, data: Record<string, string>): UnstructuredObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'app' }, data });
const item = (groupResource: string, o: UnstructuredObject): ArchiveItem => ({ groupResource, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}), name: o.metadata.name, object: o });

const archive: ArchiveItem[] = [
  item('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } }),
  item('configmaps', cm('same', { a: '1' })),
  item('configmaps', cm('differs', { a: 'backup' })),
  item('configmaps', cm('new', { a: '1' })),
  item('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bad', namespace: 'app' }, data: { p: 'eA==' } }),
];

async function restore(policy: Restore['spec']['existingResourcePolicy']) {
  const cluster = new FakeCluster();
  await cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } });
  await cluster.create(cm('same', { a: '1' }));
  await cluster.create(cm('differs', { a: 'cluster' }));
  cluster.failCreate = (o) => (o.kind === 'Secret' ? new ApiError(422, 'Invalid', 'Secret "bad" is invalid: data[p]: Invalid value') : undefined);
  const r = newRestore({ namespace: 'velero', name: 'r1', spec: { backupName: 'b1', ...(policy ? { existingResourcePolicy: policy } : {}) } });
  const results = new ResultsCollector();
  const out = await runRestore(restoreRunOptions({
    restore: r,
    backup: newBackup({ namespace: 'velero', name: 'b1', spec: {} }),
    archive: { items: archive, warnings: [] },
    client: cluster,
    results,
  }));
  return { out, results, restore: r };
}

describe('restore resource list: failed, not skipped, for items that raised a warning or error', () => {
  it('without a policy: the changed object is failed (with Velero\'s warning), the equal one skipped', async () => {
    const { out, results } = await restore(undefined);
    expect(out.resourceList).toEqual({
      'v1/ConfigMap': ['app/differs(failed)', 'app/new(created)', 'app/same(skipped)'],
      'v1/Secret': ['app/bad(failed)'],
    });
    expect(results.toJSON().warnings).toEqual({
      namespaces: { app: ['could not restore, ConfigMap:differs already exists. Warning: the in-cluster version is different than the backed-up version'] },
    });
  });

  it('with existingResourcePolicy none: the same, with the quoted name in the warning', async () => {
    const { out, results } = await restore('none');
    expect(out.resourceList['v1/ConfigMap']).toEqual(['app/differs(failed)', 'app/new(created)', 'app/same(skipped)']);
    expect(results.toJSON().warnings.namespaces?.app).toEqual(['could not restore, ConfigMap "differs" already exists. Warning: the in-cluster version is different than the backed-up version']);
  });

  it('with existingResourcePolicy update: the changed object is updated', async () => {
    const { out } = await restore('update');
    expect(out.resourceList['v1/ConfigMap']).toEqual(['app/differs(updated)', 'app/new(created)', 'app/same(skipped)']);
  });

  it('restore describe --details prints the list as Velero does', async () => {
    const { out, restore: r } = await restore(undefined);
    const text = describePlainRestore({ restore: r, details: true, cli: 'velero', resourceList: { ok: true, value: out.resourceList } });
    expect(text.slice(text.indexOf('Resource List:'))).toBe(
      'Resource List:\n  v1/ConfigMap:\n    - app/differs(failed)\n    - app/new(created)\n    - app/same(skipped)\n  v1/Secret:\n    - app/bad(failed)\n',
    );
  });

  it('the rule itself', () => {
    expect(listedOutcome('created', true)).toBe('created');
    expect(listedOutcome('updated', true)).toBe('updated');
    expect(listedOutcome('skipped', false)).toBe('skipped');
    expect(listedOutcome('skipped', true)).toBe('failed');
    expect(listedOutcome('failed', false)).toBe('failed');
  });
});
