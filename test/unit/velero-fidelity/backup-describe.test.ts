/**
 * Golden: `backup describe` against the text Velero 1.17's describer prints for the same objects. The expected
 * texts follow Velero's Printf sequence (pkg/cmd/util/output/backup_describer.go) through Go's tabwriter
 * (minwidth 0, tabwidth 8, padding 2, padchar ' '); `cli: 'velero'` so the hints name the same command.
 */
import { describe, expect, it } from 'vitest';
import type { Backup, PodVolumeBackup } from '../../../src/api/index.js';
import { usesOldResourceFilters } from '../../../src/cli/describe/backup.js';
import type { BackupVolumeInfo } from '../../../src/api/volume-info.js';
import { BACKUP_EXAMPLE, nginxBackup } from '../cli/describe/docs-examples.js';
import { describePlainBackup, podVolumeBackup, textBetween } from '../cli/describe/fixtures.js';

/** Backup b1 of namespace app with the docs example's TTL, timeouts and status, less its item counts. */
function backup(spec: Partial<Backup['spec']>): Backup {
  const example = nginxBackup();
  const { ttl, csiSnapshotTimeout, itemOperationTimeout } = example.spec;
  const { progress: _itemCounts, ...status } = example.status!;
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Backup',
    metadata: { name: 'b1', namespace: 'velero' },
    spec: { includedNamespaces: ['app'], storageLocation: 'default', ttl, csiSnapshotTimeout, itemOperationTimeout, ...spec },
    status,
  };
}

const HEAD = `Name:         b1
Namespace:    velero
Labels:       <none>
Annotations:  <none>

Phase:  Completed


Namespaces:
  Included:  app
  Excluded:  <none>

`;

const AFTER_RESOURCES = `
Label selector:  <none>

Or label selector:  <none>

Storage Location:  default

`;

/** From TTL to Expiration: b1's are the docs example's. */
const STATUS = textBetween(BACKUP_EXAMPLE, 'TTL:', 'Total items to be backed up:');

const native: BackupVolumeInfo = {
  pvName: 'pv-1',
  pvcName: 'db',
  pvcNamespace: 'app',
  backupMethod: 'NativeSnapshot',
  snapshotDataMoved: false,
  preserveLocalSnapshot: false,
  skipped: false,
  result: 'succeeded',
  nativeSnapshotInfo: { snapshotHandle: 'snap-1', volumeType: 'gp3', volumeAZ: 'us-east-1a', iops: '3000', Phase: 'Completed' },
};

const moved: BackupVolumeInfo = {
  pvName: 'pv-2',
  pvcName: 'data',
  pvcNamespace: 'app',
  backupMethod: 'CSISnapshot',
  snapshotDataMoved: true,
  preserveLocalSnapshot: false,
  skipped: false,
  result: 'succeeded',
  snapshotDataMovementInfo: { dataMover: '', uploaderType: 'kopia', snapshotHandle: 'k1', operationID: 'du-1', size: 1024, Phase: 'Completed' },
};

/** A PodVolumeBackup of b1, of the volume `volume` of pod `app/<pod>`. */
function pvb(pod: string, volume: string, phase: string): PodVolumeBackup {
  return podVolumeBackup(`b1-${pod}-${volume}`, { namespace: 'app', name: pod }, volume, phase);
}

describe('backup describe, Resources block (UseOldResourceFilters)', () => {
  it('is the scoped form when no old-style filter is set', () => {
    const expected =
      HEAD +
      `Resources:
  Included cluster-scoped:    <none>
  Excluded cluster-scoped:    <none>
  Included namespace-scoped:  *
  Excluded namespace-scoped:  <none>
` +
      AFTER_RESOURCES +
      `Velero-Native Snapshot PVs:  auto
Snapshot Move Data:          auto
Data Mover:                  velero

` +
      STATUS +
      `Backup Volumes:
  Velero-Native Snapshots: <none included>

  CSI Snapshots: <none included>

  Pod Volume Backups: <none included>

HooksAttempted:  0
HooksFailed:     0
`;
    const text = describePlainBackup({ backup: backup({}), details: false, cli: 'velero', volumeInfo: { ok: true, value: [] } });
    expect(text).toBe(expected);
  });

  it('is the old form when includeClusterResources is set, and the three volume sections stay with snapshotVolumes=false', () => {
    const expected =
      HEAD +
      `Resources:
  Included:        *
  Excluded:        <none>
  Cluster-scoped:  included
` +
      AFTER_RESOURCES +
      `Velero-Native Snapshot PVs:  false
Snapshot Move Data:          auto
Data Mover:                  velero

` +
      STATUS +
      `Backup Volumes:
  Velero-Native Snapshots:
    pv-1: specify --details for more information

  CSI Snapshots:
    app/data:
      Data Movement: included, specify --details for more information

  Pod Volume Backups - kopia (specify --details for more information):
    Completed:  2
    Failed:     1

HooksAttempted:  0
HooksFailed:     0
`;
    const text = describePlainBackup({
      backup: backup({ includeClusterResources: true, snapshotVolumes: false }),
      details: false,
      cli: 'velero',
      volumeInfo: { ok: true, value: [native, moved] },
      podVolumeBackups: [pvb('web-0', 'data', 'Completed'), pvb('web-1', 'data', 'Failed'), pvb('web-0', 'logs', 'Completed')],
    });
    expect(text).toBe(expected);
  });

  it('is the old form when includedResources or excludedResources is non-empty, even beside scoped filters', () => {
    expect(usesOldResourceFilters({ includedResources: ['pods'] })).toBe(true);
    expect(usesOldResourceFilters({ excludedResources: ['secrets'], includedNamespaceScopedResources: ['pods'] })).toBe(true);
    expect(usesOldResourceFilters({ includeClusterResources: false })).toBe(true);
    expect(usesOldResourceFilters({ includedClusterScopedResources: ['nodes'] })).toBe(false);
    expect(usesOldResourceFilters({ includedResources: [], excludedResources: [] })).toBe(false);
    const text = describePlainBackup({ backup: backup({ includedResources: ['pods', 'secrets'] }), details: false, cli: 'velero' });
    expect(text).toContain('Resources:\n  Included:        pods, secrets\n  Excluded:        <none>\n  Cluster-scoped:  auto\n\nLabel selector:');
  });
});

describe('backup describe, Backup Volumes with --details', () => {
  it('prints the native snapshot fields with Result, the data movement lines and the pods by phase', () => {
    const text = describePlainBackup({
      backup: backup({}),
      details: true,
      cli: 'velero',
      resourceList: { ok: true, value: { 'v1/PersistentVolume': ['pv-1', 'pv-2'] } },
      volumeInfo: { ok: true, value: [native, moved] },
    });
    const expected = `Expiration:  2025-10-31 10:00:00 +0000 UTC

Resource List:
  v1/PersistentVolume:
    - pv-1
    - pv-2

Backup Volumes:
  Velero-Native Snapshots:
    pv-1:
      Snapshot ID:        snap-1
      Type:               gp3
      Availability Zone:  us-east-1a
      IOPS:               3000
      Result:             succeeded

  CSI Snapshots:
    app/data:
      Data Movement:
        Operation ID: du-1
        Data Mover: velero
        Uploader Type: kopia
        Moved data Size (bytes): 1024
        Result: succeeded

  Pod Volume Backups: <none included>

HooksAttempted:  0
HooksFailed:     0
`;
    expect(text.slice(text.indexOf('Expiration:'))).toBe(expected);
  });

  it('without volume info (a backup older than the file) says the CSI section cannot be told', () => {
    const text = describePlainBackup({ backup: backup({}), details: false, cli: 'velero', volumeInfo: { ok: false, notFound: true, error: 'not found' } });
    expect(text).toContain('Backup Volumes:\n  Velero-Native Snapshots: <none included>\n\n  CSI Snapshots: <none included or not detectable>\n\n  Pod Volume Backups: <none included>\n');
  });
});
