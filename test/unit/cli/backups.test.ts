import { describe, expect, it } from 'vitest';
import {
  buildBackup,
  backupColumns,
  deleteRequestFor,
  formatExpires,
  formatGoTime,
  normaliseTriStateArgv,
  shortHumanDuration,
} from '../../../src/cli/backups.js';
import { formatTable } from '../../../src/cli/output.js';
import { parseBackup, type Backup } from '../../../src/api/index.js';
import { usageMessage } from './usage-message.js';

describe('backup create flags → Backup', () => {
  it('defaults to all namespaces and leaves tri-state flags unset', () => {
    const b = buildBackup({ name: 'nightly', namespace: 'velero' });
    expect(parseBackup(b)).toEqual(b);
    expect(b).toEqual({ apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { namespace: 'velero', name: 'nightly' }, spec: { includedNamespaces: ['*'] } });
  });

  it('maps every flag to its spec field', () => {
    const b = buildBackup({
      name: 'shop-1',
      namespace: 'cairn',
      'include-namespaces': 'shop, shop-db',
      'exclude-namespaces': 'kube-system',
      'include-resources': 'deployments.apps,configmaps',
      'exclude-resources': 'secrets',
      'include-cluster-resources': false,
      selector: 'app=web,tier!=cache',
      ttl: '72h',
      'storage-location': 'secondary',
      'default-volumes-to-fs-backup': true,
      'snapshot-volumes': false,
      labels: 'team=shop',
      annotations: 'note=before upgrade',
    });
    expect(parseBackup(b)).toEqual(b);
    expect(b.metadata).toEqual({ namespace: 'cairn', name: 'shop-1', labels: { team: 'shop' }, annotations: { note: 'before upgrade' } });
    expect(b.spec).toEqual({
      includedNamespaces: ['shop', 'shop-db'],
      excludedNamespaces: ['kube-system'],
      includedResources: ['deployments.apps', 'configmaps'],
      excludedResources: ['secrets'],
      includeClusterResources: false,
      labelSelector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['cache'] }] },
      ttl: '72h0m0s',
      storageLocation: 'secondary',
      defaultVolumesToFsBackup: true,
      snapshotVolumes: false,
    });
  });

  it('maps --or-selector to orLabelSelectors', () => {
    const b = buildBackup({ name: 'b', namespace: 'velero', 'or-selector': 'app=a or app=b' });
    expect(b.spec.orLabelSelectors).toEqual([{ matchLabels: { app: 'a' } }, { matchLabels: { app: 'b' } }]);
  });

  it('names the flag at fault', () => {
    expect(usageMessage(() => buildBackup({ name: 'Bad_Name', namespace: 'velero' }))).toMatch(/^NAME: invalid backup name/);
    expect(usageMessage(() => buildBackup({ name: 'b', namespace: 'velero', ttl: '3 days' }))).toBe('--ttl: "3 days" is not a duration (examples: 24h, 720h, 90m)');
    expect(usageMessage(() => buildBackup({ name: 'b', namespace: 'velero', selector: 'a=b=c' }))).toMatch(/^--selector: invalid selector/);
    expect(usageMessage(() => buildBackup({ name: 'b', namespace: 'velero', selector: 'a=b', 'or-selector': 'c=d' }))).toMatch(/^--or-selector: cannot be combined/);
    expect(usageMessage(() => buildBackup({ name: 'b', namespace: 'velero', 'include-namespaces': 'Shop' }))).toMatch(/^--include-namespaces: "Shop"/);
    expect(usageMessage(() => buildBackup({ name: 'b', namespace: 'velero', labels: 'novalue' }))).toBe('--labels: "novalue" is not key=value');
    expect(usageMessage(() => buildBackup({ name: 'b', namespace: 'velero', 'storage-location': 'S3!' }))).toMatch(/^--storage-location: invalid storage location name/);
  });

  it('accepts Velero spellings of tri-state flags', () => {
    const names = ['snapshot-volumes', 'include-cluster-resources'];
    expect(normaliseTriStateArgv(['b', '--snapshot-volumes=false', '--include-cluster-resources=TRUE', '--ttl=1h'], names)).toEqual([
      'b',
      '--no-snapshot-volumes',
      '--include-cluster-resources',
      '--ttl=1h',
    ]);
    expect(usageMessage(() => normaliseTriStateArgv(['--snapshot-volumes=maybe'], names))).toBe('--snapshot-volumes: "maybe" is not true or false');
  });
});

function backup(over: Partial<Backup['status']> & { name: string }, spec: Backup['spec'] = {}): Backup {
  const { name, ...status } = over;
  return { apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name, namespace: 'velero' }, spec: { storageLocation: 'default', ...spec }, status };
}

describe('backup get table', () => {
  const now = new Date('2025-10-02T10:00:00Z');

  it('has Velero columns and values', () => {
    const rows = [
      backup({ name: 'nightly', phase: 'Completed', errors: 0, warnings: 2, startTimestamp: '2025-10-01T10:00:00Z', expiration: '2025-10-31T10:00:00Z' }, { labelSelector: { matchLabels: { app: 'web' } } }),
      backup({ name: 'new-one' }),
      backup({ name: 'old', phase: 'PartiallyFailed', errors: 1, startTimestamp: '2025-09-01T10:00:00Z', expiration: '2025-10-01T10:00:00Z' }),
    ];
    expect(formatTable(backupColumns(now), rows).split('\n')).toEqual([
      'NAME      STATUS            ERRORS   WARNINGS   CREATED                         EXPIRES   STORAGE LOCATION   SELECTOR',
      'nightly   Completed         0        2          2025-10-01 10:00:00 +0000 UTC   29d       default            app=web',
      'new-one   New               0        0          <nil>                           n/a       default            <none>',
      'old       PartiallyFailed   1        0          2025-09-01 10:00:00 +0000 UTC   1d ago    default            <none>',
    ]);
  });

  it('shows Deleting once deletion started', () => {
    const b = backup({ name: 'x', phase: 'Completed' });
    (b.metadata as Record<string, unknown>).deletionTimestamp = '2025-10-02T09:00:00Z';
    expect(backupColumns(now)[1]?.value(b)).toBe('Deleting');
  });

  it('derives EXPIRES from the TTL before the server set it', () => {
    const b = backup({ name: 'x' }, { ttl: '24h0m0s' });
    (b.metadata as Record<string, unknown>).creationTimestamp = '2025-10-02T09:00:00Z';
    expect(formatExpires(b, now)).toBe('23h');
  });

  it('formats times and durations as Go and Kubernetes do', () => {
    expect(formatGoTime('2025-10-01T10:00:00Z')).toBe('2025-10-01 10:00:00 +0000 UTC');
    expect(formatGoTime(undefined)).toBeUndefined();
    expect([45_000, 12 * 60_000, 5 * 3600_000, 29 * 86400_000, 800 * 86400_000].map(shortHumanDuration)).toEqual(['45s', '12m', '5h', '29d', '2y']);
  });
});

describe('backup delete', () => {
  it("builds Velero's DeleteBackupRequest", () => {
    const b = backup({ name: 'nightly', phase: 'Completed' });
    b.metadata.uid = 'u-1';
    expect(deleteRequestFor(b)).toEqual({
      apiVersion: 'velero.io/v1',
      kind: 'DeleteBackupRequest',
      metadata: { namespace: 'velero', generateName: 'nightly-', labels: { 'velero.io/backup-name': 'nightly', 'velero.io/backup-uid': 'u-1' } },
      spec: { backupName: 'nightly' },
    });
  });
});
