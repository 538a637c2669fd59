import { describe, expect, it } from 'vitest';
import { buildRestore, defaultRestoreName, parseNamespaceMappings, restorableBackups, restoreColumns } from '../../../src/cli/restores.js';
import { formatTable } from '../../../src/cli/output.js';
import { parseRestore, type Backup, type Restore } from '../../../src/api/index.js';
import { usageMessage } from './usage-message.js';

const now = new Date('2025-10-01T10:15:00Z');

describe('restore create flags → Restore', () => {
  it('defaults the name to <backup>-<YYYYMMDDHHMMSS> and restores all namespaces', () => {
    const r = buildRestore({ namespace: 'velero', 'from-backup': 'nginx-backup' }, now);
    expect(parseRestore(r)).toEqual(r);
    expect(r.metadata.name).toBe('nginx-backup-20251001101500');
    expect(r.spec).toEqual({ backupName: 'nginx-backup', includedNamespaces: ['*'] });
    expect(defaultRestoreName('b', new Date('2026-01-02T03:04:05.678Z'))).toBe('b-20260102030405');
  });

  it('maps every flag to its spec field', () => {
    const r = buildRestore(
      {
        name: 'copy',
        namespace: 'cairn',
        'from-backup': 'shop',
        'include-namespaces': 'shop',
        'exclude-namespaces': 'other',
        'include-resources': 'configmaps,deployments.apps',
        'exclude-resources': 'secrets',
        'include-cluster-resources': true,
        'namespace-mappings': 'shop:shop-copy,a:b',
        'existing-resource-policy': 'update',
        selector: 'app=web',
        'restore-volumes': false,
        'preserve-nodeports': true,
        labels: 'why=test',
      },
      now,
    );
    expect(parseRestore(r)).toEqual(r);
    expect(r.metadata).toEqual({ namespace: 'cairn', name: 'copy', labels: { why: 'test' } });
    expect(r.spec).toEqual({
      backupName: 'shop',
      includedNamespaces: ['shop'],
      excludedNamespaces: ['other'],
      includedResources: ['configmaps', 'deployments.apps'],
      excludedResources: ['secrets'],
      includeClusterResources: true,
      namespaceMapping: { shop: 'shop-copy', a: 'b' },
      existingResourcePolicy: 'update',
      labelSelector: { matchLabels: { app: 'web' } },
      restorePVs: false,
      preserveNodePorts: true,
    });
  });

  it('names the flag at fault', () => {
    expect(usageMessage(() => buildRestore({ namespace: 'velero', 'from-backup': 'b', 'existing-resource-policy': 'replace' }))).toBe(
      '--existing-resource-policy: "replace" is not one of none, update',
    );
    expect(usageMessage(() => parseNamespaceMappings('--namespace-mappings', 'a=b'))).toBe('--namespace-mappings: "a=b" is not source:target');
    expect(usageMessage(() => parseNamespaceMappings('--namespace-mappings', 'a:b,a:c'))).toBe('--namespace-mappings: namespace "a" mapped twice');
    expect(usageMessage(() => parseNamespaceMappings('--namespace-mappings', 'a:B'))).toBe('--namespace-mappings: "B" is not a valid namespace name');
    expect(usageMessage(() => buildRestore({ namespace: 'velero', 'from-backup': 'Bad' }))).toMatch(/^--from-backup: invalid backup name/);
    expect(usageMessage(() => buildRestore({ name: 'x_y', namespace: 'velero', 'from-backup': 'b' }))).toMatch(/^NAME: invalid restore name/);
  });
});

function backup(name: string, phase: string | undefined, start?: string): Backup {
  return { apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name, namespace: 'velero' }, spec: {}, status: { ...(phase ? { phase } : {}), ...(start ? { startTimestamp: start } : {}) } } as Backup;
}

describe('choosing a backup', () => {
  it('offers Completed and PartiallyFailed backups, newest first', () => {
    const list = restorableBackups([
      backup('old', 'Completed', '2025-09-01T00:00:00Z'),
      backup('failed', 'Failed', '2025-10-01T00:00:00Z'),
      backup('partial', 'PartiallyFailed', '2025-10-02T00:00:00Z'),
      backup('running', 'InProgress', '2025-10-03T00:00:00Z'),
      backup('new', undefined),
    ]);
    expect(list.map((b) => b.metadata.name)).toEqual(['partial', 'old']);
  });
});

describe('restore get table', () => {
  it('has Velero columns', () => {
    const r: Restore = {
      apiVersion: 'velero.io/v1',
      kind: 'Restore',
      metadata: { name: 'nginx-backup-20251001101500', namespace: 'velero', creationTimestamp: '2025-10-01T10:15:00Z' } as Restore['metadata'],
      spec: { backupName: 'nginx-backup' },
      status: { phase: 'Completed', startTimestamp: '2025-10-01T10:15:00Z', completionTimestamp: '2025-10-01T10:15:40Z', warnings: 1 },
    };
    const pending: Restore = { apiVersion: 'velero.io/v1', kind: 'Restore', metadata: { name: 'p', namespace: 'velero' }, spec: { backupName: 'b' } };
    expect(formatTable(restoreColumns(), [r, pending]).split('\n')).toEqual([
      'NAME                          BACKUP         STATUS      STARTED                         COMPLETED                       ERRORS   WARNINGS   CREATED                         SELECTOR',
      'nginx-backup-20251001101500   nginx-backup   Completed   2025-10-01 10:15:00 +0000 UTC   2025-10-01 10:15:40 +0000 UTC   0        1          2025-10-01 10:15:00 +0000 UTC   <none>',
      'p                             b              New         <nil>                           <nil>                           0        0          <nil>                           <none>',
    ]);
  });
});
