import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { newBackup, type BackupSpec } from '../../../../src/api/index.js';
import { createLogger } from '../../../../src/base/logger.js';
import { buildBackup, parseOrderedResources } from '../../../../src/cli/backups.js';
import { UsageError } from '../../../../src/base/errors.js';
import type { Kube } from '../../../../src/kube/client.js';
import { registerBuiltinBackupActions } from '../../../../src/server/item-actions/builtin.js';
import { ItemActionRegistry } from '../../../../src/plugins/item-actions/registry.js';
import { BackupArchiveWriter } from '../../../../src/server/archive/writer.js';
import { backupItems } from '../../../../src/server/backup/backupper.js';
import { globPattern } from '../../../../src/api/index.js';
import { IncludesExcludes } from '../../../../src/server/backup/filters.js';
import { backupValidationErrors, namespacePatternProblem } from '../../../../src/server/backup/validation.js';
import type { IncludeExcludePolicy } from '../../../../src/server/backup/volume-policies.js';
import { FakeCluster } from './fake-cluster.js';
import { readTarGz } from './tar.js';

const quiet = createLogger({ destination: new Writable({ write: (_c, _e, done) => done() }) });
const kube = { server: 'fake', rbac: { listClusterRoleBinding: async () => ({ items: [] }) }, apiext: { listCustomResourceDefinition: async () => ({ items: [] }) } } as unknown as Kube;

function cluster(): FakeCluster {
  return new FakeCluster()
    .namespace('shop-eu')
    .namespace('shop-us')
    .namespace('blog')
    .add('pods', { name: 'a', namespace: 'shop-eu', spec: {} })
    .add('pods', { name: 'b', namespace: 'shop-eu', spec: {} })
    .add('pods', { name: 'c', namespace: 'shop-us', spec: {} })
    .add('pods', { name: 'd', namespace: 'blog', spec: {} })
    .add('configmaps', { name: 'settings', namespace: 'shop-eu' })
    .add('secrets', { name: 'creds', namespace: 'shop-eu' })
    .add('persistentvolumes', { name: 'pv-1', spec: {} })
    .add('clusterroles', { name: 'reader' });
}

const writers: BackupArchiveWriter[] = [];
afterEach(async () => {
  for (const w of writers.splice(0)) await w.dispose();
});

async function run(spec: BackupSpec, includeExcludePolicy?: IncludeExcludePolicy) {
  const archive = await BackupArchiveWriter.create();
  writers.push(archive);
  const out = await backupItems({
    kube,
    api: cluster(),
    backup: newBackup({ namespace: 'velero', name: 'b1', spec }),
    registry: registerBuiltinBackupActions(new ItemActionRegistry()),
    archive,
    log: quiet,
    ...(includeExcludePolicy ? { includeExcludePolicy } : {}),
  });
  const entries = await readTarGz((await archive.finish()).path);
  const plain = entries.map((e) => e.name).filter((n) => n.startsWith('resources/') && !n.includes('-preferredversion/'));
  return { out, plain, warnings: out.results.toJSON().warnings };
}

describe('--ordered-resources', () => {
  it("Velero's format: resource=ns/name,ns/name;resource=name", () => {
    expect(parseOrderedResources('pods=ns1/pod1,ns1/pod2;persistentvolumes=pv1')).toEqual({ pods: 'ns1/pod1,ns1/pod2', persistentvolumes: 'pv1' });
    expect(parseOrderedResources(' pods = a/b ; ')).toEqual({ pods: 'a/b' });
    expect(() => parseOrderedResources('pods')).toThrow(UsageError);
    expect(() => parseOrderedResources('pods=a/b;pods=c/d')).toThrow(/given twice/);
    expect(buildBackup({ name: 'b', namespace: 'velero', 'ordered-resources': 'pods=shop-eu/b' }).spec.orderedResources).toEqual({ pods: 'shop-eu/b' });
  });

  it('backs up the named objects first, in the order given, then the rest; a missing one is a warning', async () => {
    const { plain, warnings } = await run({ includedNamespaces: ['shop-eu', 'shop-us'], orderedResources: { pods: 'shop-us/c,shop-eu/b,shop-eu/missing,blog/d' } });
    expect(plain.filter((p) => p.startsWith('resources/pods/'))).toEqual([
      'resources/pods/namespaces/shop-us/c.json',
      'resources/pods/namespaces/shop-eu/b.json',
      'resources/pods/namespaces/shop-eu/a.json',
    ]);
    expect(warnings.namespaces?.['shop-eu']).toEqual(["Cannot find resource 'shop-eu/missing' of pods named in orderedResources (it does not exist or the backup's filters leave it out)"]);
    // blog is not in the backup: named, but left out by the filters.
    expect(warnings.namespaces?.blog?.[0]).toMatch(/^Cannot find resource 'blog\/d'/);
  });

  it('cluster-scoped names and keys written as users write resources; an unknown key is a warning', async () => {
    const { plain, warnings } = await run({ includeClusterResources: true, orderedResources: { PersistentVolume: 'pv-1', gizmos: 'x' } });
    expect(plain.some((p) => p === 'resources/persistentvolumes/cluster/pv-1.json')).toBe(true);
    expect(warnings.velero).toContain('resource "gizmos" named in orderedResources is not served by the cluster');
  });
});

describe('scoped resource filters', () => {
  it('the four flags fill the spec; mixed with the old ones they are refused', () => {
    const b = buildBackup({
      name: 'b',
      namespace: 'velero',
      'include-cluster-scoped-resources': 'persistentvolumes,storageclasses',
      'exclude-cluster-scoped-resources': 'clusterroles',
      'include-namespace-scoped-resources': 'pods,configmaps',
      'exclude-namespace-scoped-resources': 'secrets',
    });
    expect(b.spec).toMatchObject({
      includedClusterScopedResources: ['persistentvolumes', 'storageclasses'],
      excludedClusterScopedResources: ['clusterroles'],
      includedNamespaceScopedResources: ['pods', 'configmaps'],
      excludedNamespaceScopedResources: ['secrets'],
    });
    expect(() => buildBackup({ name: 'b', namespace: 'velero', 'include-resources': 'pods', 'exclude-namespace-scoped-resources': 'secrets' })).toThrow(/cannot be used together/);
  });

  it('namespace-scoped and cluster-scoped lists decide separately', async () => {
    const { plain } = await run({ includedNamespaces: ['shop-eu'], includedNamespaceScopedResources: ['pods', 'configmaps'], includedClusterScopedResources: ['persistentvolumes'] });
    expect(plain.sort()).toEqual([
      'resources/configmaps/namespaces/shop-eu/settings.json',
      'resources/namespaces/cluster/shop-eu.json',
      'resources/persistentvolumes/cluster/pv-1.json',
      'resources/pods/namespaces/shop-eu/a.json',
      'resources/pods/namespaces/shop-eu/b.json',
    ]);
  });

  it("the resource policies' include/exclude policy applies like scoped filters", async () => {
    const { plain } = await run(
      { includedNamespaces: ['shop-eu'] },
      { includedClusterScopedResources: ['clusterroles'], excludedClusterScopedResources: [], includedNamespaceScopedResources: [], excludedNamespaceScopedResources: ['secrets', 'pods'] },
    );
    expect(plain.sort()).toEqual(['resources/clusterroles.rbac.authorization.k8s.io/cluster/reader.json', 'resources/configmaps/namespaces/shop-eu/settings.json', 'resources/namespaces/cluster/shop-eu.json']);
  });
});

describe('namespace wildcards (Velero 1.17: "*" inside a name)', () => {
  it('matches as a glob in includes and excludes', async () => {
    const { plain, warnings } = await run({ includedNamespaces: ['shop-*'], excludedNamespaces: ['*-us'], includedResources: ['pods'] });
    expect(plain.sort()).toEqual(['resources/pods/namespaces/shop-eu/a.json', 'resources/pods/namespaces/shop-eu/b.json']);
    expect(warnings).toEqual({});
    const none = await run({ includedNamespaces: ['nothing-*'] });
    expect(none.warnings.velero).toContain('no namespace matches the included namespace pattern "nothing-*"');
  });

  it("validation accepts what Velero accepts: '*' in a name, not '?' or '['", () => {
    expect(namespacePatternProblem('app-*')).toBeUndefined();
    expect(namespacePatternProblem('*')).toBeUndefined();
    expect(namespacePatternProblem('app-?')).toMatch(/^invalid namespace "app-\?": a lowercase RFC 1123 label/);
    const errors = backupValidationErrors({
      backup: newBackup({ namespace: 'velero', name: 'b', spec: { includedNamespaces: ['Shop*'] } }),
      location: { apiVersion: 'velero.io/v1', kind: 'BackupStorageLocation', metadata: { name: 'default' }, spec: { provider: 'aws', objectStorage: { bucket: 'b' } } },
      locationName: 'default',
      locationFromSpec: false,
    });
    expect(errors).toEqual([expect.stringMatching(/^Invalid included\/excluded namespace lists: invalid namespace "Shop\*"/)]);
    expect(globPattern('a[bc]?')?.test('acx')).toBe(true);
    expect(new IncludesExcludes(['*-prod'], ['db-*']).shouldInclude('web-prod')).toBe(true);
    expect(new IncludesExcludes(['*-prod'], ['db-*']).shouldInclude('db-prod')).toBe(false);
  });
});
