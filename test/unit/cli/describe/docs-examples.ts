/**
 * The describe examples of docs/cli.md: the nginx backup and its restore, and the text Velero prints for each. The
 * CLI tests check them byte for byte; the Velero-fidelity tests build on them.
 */
import type { Backup, PodVolumeRestore, Restore } from '../../../../src/api/index.js';

/** The backup of docs/cli.md's `backup describe` example. */
export function nginxBackup(): Backup {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Backup',
    metadata: {
      name: 'nginx-backup',
      namespace: 'velero',
      labels: { 'velero.io/storage-location': 'default' },
      annotations: {
        'velero.io/source-cluster-k8s-minor-version': '33',
        'velero.io/resource-timeout': '10m0s',
        'velero.io/source-cluster-k8s-gitversion': 'v1.33.1',
        'velero.io/source-cluster-k8s-major-version': '1',
      },
    },
    spec: {
      includedNamespaces: ['nginx-example'],
      storageLocation: 'default',
      ttl: '720h0m0s',
      defaultVolumesToFsBackup: false,
      snapshotMoveData: false,
      csiSnapshotTimeout: '10m0s',
      itemOperationTimeout: '4h0m0s',
    },
    status: {
      formatVersion: '1.1.0',
      phase: 'Completed',
      startTimestamp: '2025-10-01T10:00:00Z',
      completionTimestamp: '2025-10-01T10:00:21Z',
      expiration: '2025-10-31T10:00:00Z',
      progress: { totalItems: 35, itemsBackedUp: 35 },
      hookStatus: {},
    },
  };
}

// docs/cli.md, the reconstructed `velero backup describe nginx-backup` (with `cairn` in hints); Velero 1.17 prints
// the scoped Resources form when no old-style filter (includeClusterResources, included/excludedResources) is set.
export const BACKUP_EXAMPLE = `Name:         nginx-backup
Namespace:    velero
Labels:       velero.io/storage-location=default
Annotations:  velero.io/resource-timeout=10m0s
              velero.io/source-cluster-k8s-gitversion=v1.33.1
              velero.io/source-cluster-k8s-major-version=1
              velero.io/source-cluster-k8s-minor-version=33

Phase:  Completed


Namespaces:
  Included:  nginx-example
  Excluded:  <none>

Resources:
  Included cluster-scoped:    <none>
  Excluded cluster-scoped:    <none>
  Included namespace-scoped:  *
  Excluded namespace-scoped:  <none>

Label selector:  <none>

Or label selector:  <none>

Storage Location:  default

Velero-Native Snapshot PVs:    auto
File System Backup (Default):  false
Snapshot Move Data:            false
Data Mover:                    velero

TTL:  720h0m0s

CSISnapshotTimeout:    10m0s
ItemOperationTimeout:  4h0m0s

Hooks:  <none>

Backup Format Version:  1.1.0

Started:    2025-10-01 10:00:00 +0000 UTC
Completed:  2025-10-01 10:00:21 +0000 UTC

Expiration:  2025-10-31 10:00:00 +0000 UTC

Total items to be backed up:  35
Items backed up:              35

Backup Volumes:
  Velero-Native Snapshots: <none included>

  CSI Snapshots: <none included>

  Pod Volume Backups - kopia (specify --details for more information):
    Completed:  1

HooksAttempted:  0
HooksFailed:     0
`;

/** The restore of docs/cli.md's `restore describe` example: finished, so it carries `hookStatus`. */
export function nginxRestore(): Restore {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Restore',
    metadata: { name: 'nginx-backup-20251001101500', namespace: 'velero' },
    spec: {
      backupName: 'nginx-backup',
      includedNamespaces: ['*'],
      excludedResources: [
        'nodes', 'events', 'events.events.k8s.io', 'backups.velero.io', 'restores.velero.io', 'resticrepositories.velero.io',
        'csinodes.storage.k8s.io', 'volumeattachments.storage.k8s.io', 'backuprepositories.velero.io',
      ],
      itemOperationTimeout: '4h0m0s',
    },
    status: {
      phase: 'Completed',
      startTimestamp: '2025-10-01T10:15:00Z',
      completionTimestamp: '2025-10-01T10:15:40Z',
      progress: { totalItems: 12, itemsRestored: 12 },
      hookStatus: {},
    },
  };
}

/**
 * docs/cli.md, the reconstructed `velero restore describe nginx-backup-20251001101500`, with the restore's hook counts
 * (Velero prints 0 for a count its hookStatus leaves out).
 */
export function restoreExample(hooksAttempted = 0, hooksFailed = 0): string {
  return `Name:         nginx-backup-20251001101500
Namespace:    velero
Labels:       <none>
Annotations:  <none>

Phase:                       Completed
Total items to be restored:  12
Items restored:              12

Started:    2025-10-01 10:15:00 +0000 UTC
Completed:  2025-10-01 10:15:40 +0000 UTC

Backup:  nginx-backup

Namespaces:
  Included:  all namespaces found in the backup
  Excluded:  <none>

Resources:
  Included:        *
  Excluded:        nodes, events, events.events.k8s.io, backups.velero.io, restores.velero.io, resticrepositories.velero.io, csinodes.storage.k8s.io, volumeattachments.storage.k8s.io, backuprepositories.velero.io
  Cluster-scoped:  auto

Namespace mappings:  <none>

Label selector:  <none>

Or label selector:  <none>

Restore PVs:  auto

kopia Restores (specify --details for more information):
  Completed:  1

CSI Snapshot Restores: <none included>

Existing Resource Policy:   <none>
ItemOperationTimeout:       4h0m0s

Preserve Service NodePorts:  auto


HooksAttempted:   ${hooksAttempted}
HooksFailed:      ${hooksFailed}
`;
}

/** The one pod volume restore of the restore example, Completed. */
export const nginxPodVolumeRestore = {
  apiVersion: 'velero.io/v1',
  kind: 'PodVolumeRestore',
  metadata: { name: 'pvr-1', namespace: 'velero' },
  spec: { pod: { namespace: 'nginx-example', name: 'web-0' }, volume: 'data', uploaderType: 'kopia', backupStorageLocation: 'default', repoIdentifier: '', snapshotID: 's', sourceNamespace: 'nginx-example' },
  status: { phase: 'Completed' },
} as PodVolumeRestore;
