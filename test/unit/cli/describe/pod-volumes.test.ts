import { describe, expect, it } from 'vitest';
import { progressText } from '../../../../src/cli/describe/pod-volumes.js';
import type { Backup, PodVolumeBackup, PodVolumeRestore } from '../../../../src/api/index.js';
import type { BackupVolumeInfo } from '../../../../src/api/volume-info.js';
import { describePlainBackup, describePlainRestore, textBetween, waitingRestore } from './fixtures.js';

function backup(phase: string): Backup {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Backup',
    metadata: { name: 'app-backup', namespace: 'velero' },
    spec: { includedNamespaces: ['app'], storageLocation: 'default', ttl: '720h0m0s', defaultVolumesToFsBackup: false },
    status: { formatVersion: '1.1.0', phase, startTimestamp: '2025-10-01T10:00:00Z', progress: { totalItems: 20, itemsBackedUp: 20 }, hookStatus: {} },
  } as Backup;
}

type PvbStatus = NonNullable<PodVolumeBackup['status']>;

function pvb(pod: string, volume: string, status: PvbStatus, pvc?: string): PodVolumeBackup {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'PodVolumeBackup',
    metadata: { name: `app-backup-${pod}-${volume}`, namespace: 'velero', ...(pvc ? { annotations: { 'velero.io/pvc-name': pvc } } : {}) },
    spec: { node: pod === 'web-0' ? 'node-1' : 'node-2', pod: { kind: 'Pod', namespace: 'app', name: pod, uid: `uid-${pod}` }, volume, backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia' },
    status,
  } as PodVolumeBackup;
}

/** One PVB in every phase a user can see. */
const everyPhase: PodVolumeBackup[] = [
  pvb('web-0', 'data', { phase: 'Completed', snapshotID: '4f0c1d2e', path: '/u1', startTimestamp: '2025-10-01T10:00:05Z', completionTimestamp: '2025-10-01T10:00:20Z', progress: { totalBytes: 41943040, bytesDone: 41943040 } }, 'data-web-0'),
  pvb('web-0', 'empty', { phase: 'Completed', message: 'volume was empty so no snapshot was taken', progress: {} }),
  pvb('web-0', 'cache', { phase: 'Failed', message: 'data path backup failed: pod was killed', progress: { totalBytes: 1000, bytesDone: 250 } }),
  pvb('web-0', 'tmp', { phase: 'Canceled', message: 'canceled by the user' }),
  pvb('web-1', 'data', { phase: 'InProgress', startTimestamp: '2025-10-01T10:00:06Z', progress: { totalBytes: 2000, bytesDone: 1337 } }, 'data-web-1'),
  pvb('web-1', 'logs', { phase: 'Canceling', progress: { totalBytes: 100, bytesDone: 10 } }),
  pvb('web-1', 'prep', { phase: 'Prepared' }),
  pvb('web-1', 'acc', { phase: 'Accepted' }),
  pvb('web-2', 'new', {}),
];

function volumesSection(text: string): string {
  return textBetween(text, 'Backup Volumes:', 'HooksAttempted:');
}

describe('backup describe: pod volume backups', () => {
  it('counts volumes per phase without --details, in Velero order', () => {
    const text = describePlainBackup({ backup: backup('WaitingForPluginOperations'), details: false, volumeInfo: { ok: true, value: [] }, podVolumeBackups: everyPhase });
    expect(volumesSection(text)).toBe(`Backup Volumes:
  Velero-Native Snapshots: <none included>

  CSI Snapshots: <none included>

  Pod Volume Backups - kopia (specify --details for more information):
    Completed:    2
    Failed:       1
    Canceled:     1
    In Progress:  1
    Canceling:    1
    Prepared:     1
    Accepted:     1
    New:          1

`);
  });

  it('with --details lists volumes by pod, then each volume with method, snapshot, size or live progress', () => {
    const text = describePlainBackup({
      backup: backup('WaitingForPluginOperations'),
      details: true,
      resourceList: { ok: true, value: {} },
      volumeInfo: { ok: true, value: [] },
      podVolumeBackups: everyPhase,
    });
    expect(volumesSection(text)).toBe(`Backup Volumes:
  Velero-Native Snapshots: <none included>

  CSI Snapshots: <none included>

  Pod Volume Backups - kopia:
    Completed:
      app/web-0: data, empty
    Failed:
      app/web-0: cache
    Canceled:
      app/web-0: tmp
    In Progress:
      app/web-1: data
    Canceling:
      app/web-1: logs
    Prepared:
      app/web-1: prep
    Accepted:
      app/web-1: acc
    New:
      app/web-2: new

  Pod Volume Backup Details:
    app/web-0/cache:
      Phase:        Failed
      Method:       PodVolumeBackup (kopia)
      Node:         node-1
      Snapshot ID:  <none>
      Progress:     250 of 1000 bytes (25%)
      Message:      data path backup failed: pod was killed
    app/web-0/data:
      Phase:         Completed
      PVC:           data-web-0
      Method:        PodVolumeBackup (kopia)
      Node:          node-1
      Snapshot ID:   4f0c1d2e
      Size (bytes):  41943040
      Started:       2025-10-01 10:00:05 +0000 UTC
      Completed:     2025-10-01 10:00:20 +0000 UTC
    app/web-0/empty:
      Phase:         Completed
      Method:        PodVolumeBackup (kopia)
      Node:          node-1
      Snapshot ID:   <none>
      Size (bytes):  0
      Message:       volume was empty so no snapshot was taken
    app/web-0/tmp:
      Phase:        Canceled
      Method:       PodVolumeBackup (kopia)
      Node:         node-1
      Snapshot ID:  <none>
      Message:      canceled by the user
    app/web-1/acc:
      Phase:        Accepted
      Method:       PodVolumeBackup (kopia)
      Node:         node-2
      Snapshot ID:  <none>
    app/web-1/data:
      Phase:        In Progress
      PVC:          data-web-1
      Method:       PodVolumeBackup (kopia)
      Node:         node-2
      Snapshot ID:  <none>
      Progress:     1337 of 2000 bytes (66%)
      Started:      2025-10-01 10:00:06 +0000 UTC
    app/web-1/logs:
      Phase:        Canceling
      Method:       PodVolumeBackup (kopia)
      Node:         node-2
      Snapshot ID:  <none>
      Progress:     10 of 100 bytes (10%)
    app/web-1/prep:
      Phase:        Prepared
      Method:       PodVolumeBackup (kopia)
      Node:         node-2
      Snapshot ID:  <none>
    app/web-2/new:
      Phase:        New
      Method:       PodVolumeBackup (kopia)
      Node:         node-2
      Snapshot ID:  <none>

`);
  });

  it('falls back to the stored volume info when the cluster holds no PodVolumeBackups', () => {
    const info: BackupVolumeInfo[] = [
      {
        pvcName: 'data-web-0',
        pvcNamespace: 'app',
        pvName: 'pvc-1234',
        backupMethod: 'PodVolumeBackup',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        startTimestamp: '2025-10-01T10:00:05Z',
        completionTimestamp: '2025-10-01T10:00:20Z',
        result: 'succeeded',
        pvbInfo: { snapshotHandle: 'k5f0', size: 1048576, uploaderType: 'kopia', volumeName: 'data', podName: 'web-0', podNamespace: 'app', nodeName: 'node-1', Phase: 'Completed' },
        pvInfo: { reclaimPolicy: 'Delete', labels: null },
      },
      { pvName: 'pv-other', snapshotDataMoved: false, preserveLocalSnapshot: false, skipped: true, skippedReason: 'any: not selected;' },
    ];
    const brief = describePlainBackup({ backup: backup('Completed'), details: false, volumeInfo: { ok: true, value: info } });
    expect(volumesSection(brief)).toContain('  Pod Volume Backups - kopia (specify --details for more information):\n    Completed:  1\n\n');
    const text = describePlainBackup({ backup: backup('Completed'), details: true, resourceList: { ok: true, value: {} }, volumeInfo: { ok: true, value: info } });
    expect(volumesSection(text)).toContain(`  Pod Volume Backups - kopia:
    Completed:
      app/web-0: data

  Pod Volume Backup Details:
    app/web-0/data:
      Phase:         Completed
      PVC:           data-web-0
      Method:        PodVolumeBackup (kopia)
      Node:          node-1
      Snapshot ID:   k5f0
      Size (bytes):  1048576
      Started:       2025-10-01 10:00:05 +0000 UTC
      Completed:     2025-10-01 10:00:20 +0000 UTC

`);
  });

  it('keeps "<none included>" for a backup without pod volumes', () => {
    const text = describePlainBackup({ backup: backup('Completed'), details: true, resourceList: { ok: true, value: {} }, volumeInfo: { ok: true, value: [] } });
    expect(volumesSection(text)).toBe('Backup Volumes:\n  Velero-Native Snapshots: <none included>\n\n  CSI Snapshots: <none included>\n\n  Pod Volume Backups: <none included>\n\n');
  });
});

function pvr(pod: string, volume: string, status: NonNullable<PodVolumeRestore['status']>): PodVolumeRestore {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'PodVolumeRestore',
    metadata: { name: `app-restore-${pod}-${volume}`, namespace: 'velero' },
    spec: { pod: { kind: 'Pod', namespace: 'app', name: pod, uid: 'u' }, volume, backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia', snapshotID: `snap-${volume}`, sourceNamespace: 'app' },
    status,
  } as PodVolumeRestore;
}

describe('restore describe: pod volume restores', () => {
  const pvrs = [
    pvr('web-0', 'data', { phase: 'Completed', node: 'node-1', progress: { totalBytes: 4096, bytesDone: 4096 }, completionTimestamp: '2025-10-01T10:16:00Z' }),
    pvr('web-1', 'data', { phase: 'InProgress', node: 'node-2', progress: { totalBytes: 4096, bytesDone: 1024 } }),
    pvr('web-1', 'logs', { phase: 'Failed', node: 'node-2', message: 'data path restore failed: no space left' }),
    pvr('web-2', 'data', {}),
  ];

  it('counts per phase without --details', () => {
    const text = describePlainRestore({ restore: waitingRestore(), details: false, podVolumeRestores: pvrs });
    expect(text).toContain('Restore PVs:  auto\n\nkopia Restores (specify --details for more information):\n  Completed:    1\n  Failed:       1\n  In Progress:  1\n  New:          1\n\nExisting Resource Policy:');
  });

  it('with --details lists volumes by pod, then each volume with snapshot, size or live progress', () => {
    const text = describePlainRestore({ restore: waitingRestore(), details: true, podVolumeRestores: pvrs, resourceList: { ok: true, value: {} } });
    expect(textBetween(text, 'kopia Restores:', 'Existing Resource Policy:')).toBe(`kopia Restores:
  Completed:
    app/web-0: data
  Failed:
    app/web-1: logs
  In Progress:
    app/web-1: data
  New:
    app/web-2: data

Pod Volume Restore Details:
  app/web-0/data:
    Phase:         Completed
    Method:        PodVolumeRestore (kopia)
    Node:          node-1
    Snapshot ID:   snap-data
    Size (bytes):  4096
    Completed:     2025-10-01 10:16:00 +0000 UTC
  app/web-1/data:
    Phase:        In Progress
    Method:       PodVolumeRestore (kopia)
    Node:         node-2
    Snapshot ID:  snap-data
    Progress:     1024 of 4096 bytes (25%)
  app/web-1/logs:
    Phase:        Failed
    Method:       PodVolumeRestore (kopia)
    Node:         node-2
    Snapshot ID:  snap-logs
    Message:      data path restore failed: no space left
  app/web-2/data:
    Phase:        New
    Method:       PodVolumeRestore (kopia)
    Snapshot ID:  snap-data

`);
  });
});

describe('progressText', () => {
  it('floors the percentage and leaves it out when the total is unknown', () => {
    expect(progressText(1337, 2000)).toBe('1337 of 2000 bytes (66%)');
    expect(progressText(2000, 2000)).toBe('2000 of 2000 bytes (100%)');
    expect(progressText(undefined, undefined)).toBe('0 of 0 bytes');
    expect(progressText(5, 0)).toBe('5 of 0 bytes');
  });
});
