import { describe, expect, it } from 'vitest';
import { backupDescription, describeBackup } from '../../../src/cli/describe/backup.js';
import { restoreDescription } from '../../../src/cli/describe/restore.js';
import { colours } from '../../../src/cli/colour.js';
import type { PodVolumeBackup, DeleteBackupRequest } from '../../../src/api/index.js';
import { describePlainBackup, describePlainRestore, podVolumeBackup } from './describe/fixtures.js';
import { BACKUP_EXAMPLE, nginxBackup, nginxPodVolumeRestore, nginxRestore, restoreExample } from './describe/docs-examples.js';

/** A PodVolumeBackup of the docs example's backup, of the volume `volume` of pod `nginx-example/<pod>`. */
function pvb(phase: string, pod: string, volume: string): PodVolumeBackup {
  return podVolumeBackup(`pvb-${pod}-${volume}`, { namespace: 'nginx-example', name: pod }, volume, phase);
}

describe('backup describe', () => {
  it("prints Velero's describe example (docs/cli.md) byte for byte", () => {
    const text = describePlainBackup({
      backup: nginxBackup(),
      details: false,
      volumeInfo: { ok: true, value: [] },
      podVolumeBackups: [pvb('Completed', 'web-0', 'data')],
    });
    expect(text).toBe(BACKUP_EXAMPLE);
  });

  it('adds a logs hint to Failed and lists validation errors under one heading', () => {
    const b = nginxBackup();
    b.status = { phase: 'FailedValidation', validationErrors: ['a storage location is missing', 'invalid selector'] };
    const text = describePlainBackup({ backup: b, details: false });
    expect(text).toContain('Phase:  FailedValidation\n\nValidation errors:  a storage location is missing\n                    invalid selector\n');
    expect(text).toContain('Started:    <n/a>\nCompleted:  <n/a>\n\nExpiration:  <nil>\n');
    b.status = { phase: 'Failed' };
    expect(describePlainBackup({ backup: b, details: false })).toContain(
      'Phase:  Failed (run `cairn backup logs nginx-backup` for more information)\n',
    );
  });

  it('shows warnings and errors from the results file in Velero/Cluster/Namespaces blocks', () => {
    const b = nginxBackup();
    b.status = { ...b.status, phase: 'PartiallyFailed', warnings: 1, errors: 2 };
    const text = describePlainBackup({
      backup: b,
      details: false,
      results: { ok: true, value: { warnings: { namespaces: { 'nginx-example': ['w1'] } }, errors: { velero: ['e1'], cluster: ['e2'] } } },
    });
    expect(text).toContain(
      '\n\nWarnings:\n  Velero:     <none>\n  Cluster:    <none>\n  Namespaces:\n    nginx-example:  w1\n\nErrors:\n  Velero:   e1\n  Cluster:  e2\n  Namespaces: <none>\n\nNamespaces:\n',
    );
  });

  it('shows only the counts when the results file is missing', () => {
    const b = nginxBackup();
    b.status = { ...b.status, warnings: 3 };
    const text = describePlainBackup({ backup: b, details: false, results: { ok: false, notFound: true, error: 'x' } });
    expect(text).toContain('Phase:  Completed\n\nErrors:    0\nWarnings:  3\n\nNamespaces:');
  });

  it('with --details lists resources and pod volumes by pod', () => {
    const text = describePlainBackup({
      backup: nginxBackup(),
      details: true,
      resourceList: { ok: true, value: { 'v1/Pod': ['nginx-example/web-0'], 'apps/v1/Deployment': ['nginx-example/web'] } },
      volumeInfo: { ok: true, value: [] },
      podVolumeBackups: [pvb('Completed', 'web-0', 'logs'), pvb('Completed', 'web-0', 'data'), pvb('InProgress', 'web-1', 'data')],
    });
    expect(text).toContain(
      'Items backed up:              35\n\nResource List:\n  apps/v1/Deployment:\n    - nginx-example/web\n  v1/Pod:\n    - nginx-example/web-0\n\nBackup Volumes:\n',
    );
    expect(text).toContain('  Pod Volume Backups - kopia:\n    Completed:\n      nginx-example/web-0: data, logs\n    In Progress:\n      nginx-example/web-1: data\n');
  });

  it('says when the resource list or volume info cannot be read', () => {
    const text = describePlainBackup({
      backup: nginxBackup(),
      details: true,
      resourceList: { ok: false, notFound: true, error: 'gone' },
      volumeInfo: { ok: false, notFound: false, error: 'timed out' },
    });
    expect(text).toContain('Resource List:  <backup resource list not found>\n\nBackup Volumes:\n  <error getting backup volume info: timed out>\n');
  });

  it('prints the three volume sections even for backups without volume snapshots, and the deletion attempts', () => {
    const b = nginxBackup();
    b.spec.snapshotVolumes = false;
    const req: DeleteBackupRequest = {
      apiVersion: 'velero.io/v1',
      kind: 'DeleteBackupRequest',
      metadata: { name: 'nginx-backup-abc', namespace: 'velero', creationTimestamp: '2025-10-02T08:00:00Z' } as DeleteBackupRequest['metadata'],
      spec: { backupName: 'nginx-backup' },
      status: { phase: 'Processed', errors: ['backup storage location default is read-only'] },
    };
    const text = describePlainBackup({ backup: b, details: false, deleteRequests: [req] });
    expect(text).toContain('Velero-Native Snapshot PVs:    false\n');
    expect(text).toContain(
      'Backup Volumes:\n  Velero-Native Snapshots: <none included>\n\n  CSI Snapshots: <none included or not detectable>\n\n  Pod Volume Backups: <none included>\n\nHooksAttempted:  0\nHooksFailed:     0\n\nDeletion Attempts (1 failed):\n  2025-10-02 08:00:00 +0000 UTC: Processed\n  Errors:\n    backup storage location default is read-only\n',
    );
  });

  it('lists async item operations with --details, counts them without', () => {
    const b = nginxBackup();
    b.status = { ...b.status, backupItemOperationsAttempted: 2, backupItemOperationsCompleted: 1, backupItemOperationsFailed: 1 };
    expect(describePlainBackup({ backup: b, details: false })).toContain(
      'Items backed up:              35\n\nBackup Item Operations:  1 of 2 completed successfully, 1 failed (specify --details for more information)\nBackup Volumes:\n',
    );
    const op = {
      spec: {
        backupName: 'nginx-backup', backupUID: 'u', backupItemAction: 'velero.io/csi-pvc-backupper', operationID: 'du-1',
        resourceIdentifier: { Group: '', Resource: 'persistentvolumeclaims', Namespace: 'nginx-example', Name: 'data' },
        postOperationItems: [{ Group: 'velero.io', Resource: 'datauploads', Namespace: 'velero', Name: 'du-1' }],
      },
      status: { phase: 'Failed' as const, error: 'timed out', nCompleted: 10, nTotal: 20, operationUnits: 'Bytes', created: '2025-10-01T10:00:05Z' },
    };
    // (Without a tab on the Resource List line; `Resource List:\t<not found>` would widen the column as in Velero.)
    const text = describePlainBackup({ backup: b, details: true, itemOperations: { ok: true, value: [op] }, resourceList: { ok: true, value: {} } });
    expect(text).toContain(
      [
        'Backup Item Operations:',
        '  Operation for persistentvolumeclaims nginx-example/data:',
        '    Backup Item Action Plugin:  velero.io/csi-pvc-backupper',
        '    Operation ID:               du-1',
        '    Items to Update:',
        // Go's tabwriter restarts the column after the cell-less "Items to Update:" line, as in Velero's output.
        `    ${' '.repeat(18)}datauploads.velero.io velero/du-1`,
        '    Phase:            Failed',
        '    Operation Error:  timed out',
        '    Progress:         10 of 20 complete (Bytes)',
        '    Created:          2025-10-01 10:00:05 +0000 UTC',
        '',
      ].join('\n'),
    );
    expect(describePlainBackup({ backup: b, details: true, itemOperations: { ok: false, notFound: false, error: 'boom' } })).toContain(
      'Backup Item Operations:  <error getting operation info: boom>\n',
    );
  });

  it('colours the phase only when colour is on', () => {
    const on = describeBackup({ backup: nginxBackup(), details: false, colours: colours(true), podVolumeBackups: [], deleteRequests: [] });
    expect(on).toContain('Phase:  \u001b[32mCompleted\u001b[39m\n');
    const off = describePlainBackup({ backup: nginxBackup(), details: false });
    expect(off).not.toContain('\u001b[');
  });

  it('shows the scoped resource filters when they are used, and selectors', () => {
    const b = nginxBackup();
    b.spec.includedClusterScopedResources = ['storageclasses'];
    b.spec.orLabelSelectors = [{ matchLabels: { app: 'a' } }, { matchLabels: { app: 'b' } }];
    const text = describePlainBackup({ backup: b, details: false });
    expect(text).toContain(
      'Resources:\n  Included cluster-scoped:    storageclasses\n  Excluded cluster-scoped:    <none>\n  Included namespace-scoped:  *\n  Excluded namespace-scoped:  <none>\n',
    );
    expect(text).toContain('Or label selector:  app=a or app=b\n');
  });
});

describe('restore describe', () => {
  it("prints Velero's describe example (docs/cli.md) byte for byte", () => {
    const text = describePlainRestore({ restore: nginxRestore(), details: false, volumeInfo: { ok: true, value: [] }, podVolumeRestores: [nginxPodVolumeRestore] });
    expect(text).toBe(restoreExample());
  });

  it('shows mappings, the policy, a logs hint when failed, and the resource list with --details', () => {
    const r = nginxRestore();
    r.spec.namespaceMapping = { 'nginx-example': 'nginx-copy', a: 'b' };
    r.spec.existingResourcePolicy = 'update';
    r.status = { ...r.status, phase: 'PartiallyFailed', errors: 1 };
    const text = describePlainRestore({
      restore: r,
      details: true,
      results: { ok: true, value: { warnings: {}, errors: { namespaces: { 'nginx-copy': ['could not restore x'] } } } },
      resourceList: { ok: true, value: { 'v1/ConfigMap': ['nginx-copy/cfg(created)'] } },
    });
    expect(text).toContain("Phase:                       PartiallyFailed (run 'cairn restore logs nginx-backup-20251001101500' for more information)\n");
    expect(text).toContain('\n\nErrors:\n  Velero:     <none>\n  Cluster:    <none>\n  Namespaces:\n    nginx-copy:  could not restore x\n\nBackup:  nginx-backup\n');
    expect(text).toContain('Namespace mappings:  a=b\n                     nginx-example=nginx-copy\n');
    expect(text).toContain('Existing Resource Policy:   update\n');
    expect(text).not.toContain('CSI Snapshot Restores');
    expect(text.endsWith('HooksFailed:      0\n\nResource List:\n  v1/ConfigMap:\n    - nginx-copy/cfg(created)\n')).toBe(true);
  });

  it('marks a restore being deleted and uses the in-progress wording', () => {
    const r = nginxRestore();
    (r.metadata as Record<string, unknown>).deletionTimestamp = '2025-10-01T11:00:00Z';
    r.status = { phase: 'InProgress', progress: { totalItems: 12, itemsRestored: 3 } };
    const text = describePlainRestore({ restore: r, details: false });
    expect(text).toContain('Phase:                                 InProgress (Deleting)\nEstimated total items to be restored:  12\nItems restored so far:                 3\n');
  });
});

describe('colour', () => {
  it('is on only for a terminal without NO_COLOR or --no-color', async () => {
    const { colourEnabled } = await import('../../../src/cli/colour.js');
    expect(colourEnabled({ tty: true, env: {} })).toBe(true);
    expect(colourEnabled({ tty: false, env: {} })).toBe(false);
    expect(colourEnabled({ tty: true, env: { NO_COLOR: '1' } })).toBe(false);
    expect(colourEnabled({ tty: true, env: {}, noColor: true })).toBe(false);
  });
});

describe('describe -o json|yaml shapes', () => {
  it('BackupDescription: the Backup, results, PVBs, deletion requests; details only with --details', () => {
    const backup = nginxBackup();
    const base = { backup, podVolumeBackups: [], deleteRequests: [], results: { ok: false as const, notFound: true, error: 'x' } };
    expect(backupDescription({ ...base, details: false })).toEqual({
      apiVersion: 'cairn.io/v1',
      kind: 'BackupDescription',
      backup,
      results: null,
      podVolumeBackups: [],
      deleteBackupRequests: [],
    });
    expect(
      backupDescription({ ...base, details: true, resourceList: { ok: true, value: { 'v1/Pod': ['a/b'] } }, volumeInfo: { ok: false, notFound: true, error: 'x' } }).details,
    ).toEqual({ resourceList: { 'v1/Pod': ['a/b'] }, volumeInfo: null });
  });

  it('RestoreDescription: the Restore, results, PVRs, volume info; resource list only with --details', () => {
    const restore = nginxRestore();
    const results = { warnings: { velero: ['w'] }, errors: {} };
    expect(restoreDescription({ restore, details: false, podVolumeRestores: [nginxPodVolumeRestore], results: { ok: true, value: results }, volumeInfo: { ok: true, value: [] } })).toEqual({
      apiVersion: 'cairn.io/v1',
      kind: 'RestoreDescription',
      restore,
      results,
      podVolumeRestores: [nginxPodVolumeRestore],
      volumeInfo: [],
    });
  });
});
