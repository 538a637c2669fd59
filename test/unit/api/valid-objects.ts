/**
 * One valid object of every kind, as Velero (or the API server) would write it, plus a field of each kind to
 * break with a wrong type. Shared by the unit tests and the CRD integration test.
 */
import type { KindName, ObjectOf } from '../../../src/api/index.js';

const meta = (name: string) => ({ namespace: 'velero', name });
const time = '2025-03-04T05:06:07Z';

export const validObjects: { [K in KindName]: ObjectOf<K> } = {
  Backup: {
    apiVersion: 'velero.io/v1',
    kind: 'Backup',
    metadata: { ...meta('nightly-1'), labels: { 'velero.io/storage-location': 'default' } },
    spec: {
      includedNamespaces: ['app'],
      excludedResources: null,
      ttl: '720h0m0s',
      storageLocation: 'default',
      defaultVolumesToFsBackup: true,
      snapshotVolumes: null,
      labelSelector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] },
      hooks: {
        resources: [{ name: 'freeze', pre: [{ exec: { command: ['fsfreeze', '-f', '/data'], onError: 'Fail', timeout: '30s' } }] }],
      },
      csiSnapshotTimeout: '10m0s',
      itemOperationTimeout: '4h0m0s',
      resourcePolicy: { kind: 'configmap', name: 'policy' },
      uploaderConfig: { parallelFilesUpload: 4 },
    },
    status: {
      version: 1,
      formatVersion: '1.1.0',
      phase: 'Completed',
      expiration: '2025-04-03T05:06:07Z',
      startTimestamp: time,
      completionTimestamp: time,
      progress: { totalItems: 10, itemsBackedUp: 10 },
      hookStatus: {},
      warnings: 1,
    },
  },
  Restore: {
    apiVersion: 'velero.io/v1',
    kind: 'Restore',
    metadata: meta('nightly-1-20250304'),
    spec: {
      backupName: 'nightly-1',
      namespaceMapping: { app: 'app-copy' },
      existingResourcePolicy: 'update',
      restorePVs: true,
      hooks: {
        resources: [
          {
            name: 'init',
            postHooks: [
              { init: { initContainers: [{ name: 'prep', image: 'busybox', command: ['true'] }], timeout: '1m' } },
              { exec: { command: ['reindex'], waitForReady: true, execTimeout: '5m', waitTimeout: '10m' } },
            ],
          },
        ],
      },
      uploaderConfig: { writeSparseFiles: true, parallelFilesDownload: 2 },
    },
    status: { phase: 'InProgress', startTimestamp: time, progress: { totalItems: 3, itemsRestored: 1 } },
  },
  Schedule: {
    apiVersion: 'velero.io/v1',
    kind: 'Schedule',
    metadata: meta('nightly'),
    spec: { schedule: '0 1 * * *', template: { includedNamespaces: ['*'], ttl: '168h0m0s' }, paused: false },
    status: { phase: 'Enabled', lastBackup: time },
  },
  BackupStorageLocation: {
    apiVersion: 'velero.io/v1',
    kind: 'BackupStorageLocation',
    metadata: meta('default'),
    spec: {
      provider: 'aws',
      objectStorage: { bucket: 'backups', prefix: 'cluster-a', caCert: 'LS0tLS1CRUdJTg==' },
      config: { region: 'minio', s3Url: 'http://127.0.0.1:9000', s3ForcePathStyle: 'true' },
      credential: { name: 'cloud-credentials', key: 'cloud' },
      default: true,
      accessMode: 'ReadWrite',
      backupSyncPeriod: '1m0s',
      validationFrequency: null,
    },
    status: { phase: 'Available', lastValidationTime: time, lastSyncedTime: null },
  },
  VolumeSnapshotLocation: {
    apiVersion: 'velero.io/v1',
    kind: 'VolumeSnapshotLocation',
    metadata: meta('default'),
    spec: { provider: 'aws', config: { region: 'us-east-1' } },
    status: { phase: 'Available' },
  },
  PodVolumeBackup: {
    apiVersion: 'velero.io/v1',
    kind: 'PodVolumeBackup',
    metadata: {
      ...meta('nightly-1-x7k2p'),
      labels: { 'velero.io/backup-name': 'nightly-1', 'velero.io/backup-uid': 'uid-1' },
      annotations: { 'velero.io/pvc-name': 'data' },
      ownerReferences: [{ apiVersion: 'velero.io/v1', kind: 'Backup', name: 'nightly-1', uid: 'uid-1', controller: true }],
      finalizers: ['velero.io/pod-volume-finalizer'],
    },
    spec: {
      node: 'node-1',
      pod: { kind: 'Pod', namespace: 'app', name: 'web-0', uid: 'pod-uid' },
      volume: 'data',
      backupStorageLocation: 'default',
      repoIdentifier: '',
      uploaderType: 'kopia',
      tags: { backup: 'nightly-1', ns: 'app', pod: 'web-0', volume: 'data' },
      uploaderSettings: null,
    },
    status: {
      phase: 'Completed',
      path: '/host_pods/pod-uid/volumes/kubernetes.io~csi/pvc-1/mount',
      snapshotID: 'k0123456789abcdef',
      startTimestamp: time,
      completionTimestamp: time,
      acceptedTimestamp: time,
      progress: { totalBytes: 1048576, bytesDone: 1048576 },
    },
  },
  PodVolumeRestore: {
    apiVersion: 'velero.io/v1',
    kind: 'PodVolumeRestore',
    metadata: { ...meta('nightly-1-20250304-abcde'), labels: { 'velero.io/restore-name': 'nightly-1-20250304' } },
    spec: {
      pod: { kind: 'Pod', namespace: 'app-copy', name: 'web-0', uid: 'pod-uid-2' },
      volume: 'data',
      backupStorageLocation: 'default',
      repoIdentifier: '',
      uploaderType: 'kopia',
      snapshotID: 'k0123456789abcdef',
      sourceNamespace: 'app',
      uploaderSettings: { WriteSparseFiles: 'true' },
      cancel: false,
    },
    status: { phase: 'InProgress', node: 'node-1', progress: { totalBytes: 100, bytesDone: 50 } },
  },
  BackupRepository: {
    apiVersion: 'velero.io/v1',
    kind: 'BackupRepository',
    metadata: {
      ...meta('app-default-kopia'),
      labels: {
        'velero.io/volume-namespace': 'app',
        'velero.io/storage-location': 'default',
        'velero.io/repository-type': 'kopia',
      },
    },
    spec: {
      volumeNamespace: 'app',
      backupStorageLocation: 'default',
      repositoryType: 'kopia',
      maintenanceFrequency: '1h0m0s',
      repositoryConfig: { cacheLimitMB: '1024' },
    },
    status: {
      phase: 'Ready',
      lastMaintenanceTime: time,
      recentMaintenance: [{ result: 'Succeeded', startTimestamp: time, completeTimestamp: time }],
    },
  },
  DeleteBackupRequest: {
    apiVersion: 'velero.io/v1',
    kind: 'DeleteBackupRequest',
    metadata: meta('nightly-1-q8z4m'),
    spec: { backupName: 'nightly-1' },
    status: { phase: 'Processed', errors: null },
  },
  DownloadRequest: {
    apiVersion: 'velero.io/v1',
    kind: 'DownloadRequest',
    metadata: meta('nightly-1-0f4b6e1c'),
    spec: { target: { kind: 'BackupLog', name: 'nightly-1' } },
    status: { phase: 'Processed', downloadURL: 'http://127.0.0.1:9000/signed', expiration: time },
  },
  ServerStatusRequest: {
    apiVersion: 'velero.io/v1',
    kind: 'ServerStatusRequest',
    metadata: meta('velero-cli-abcde'),
    spec: {},
    status: {
      phase: 'Processed',
      processedTimestamp: time,
      serverVersion: 'v0.1.0',
      plugins: [{ name: 'velero.io/aws', kind: 'ObjectStore' }],
    },
  },
  DataUpload: {
    apiVersion: 'velero.io/v2alpha1',
    kind: 'DataUpload',
    metadata: meta('nightly-1-du1'),
    spec: {
      snapshotType: 'CSI',
      csiSnapshot: { volumeSnapshot: 'vs-1', storageClass: 'standard', snapshotClass: 'csi', driver: 'hostpath.csi.k8s.io' },
      sourcePVC: 'data',
      backupStorageLocation: 'default',
      sourceNamespace: 'app',
      operationTimeout: '10m0s',
      dataMoverConfig: null,
    },
    status: { phase: 'Accepted', node: 'node-1', nodeOS: 'linux', acceptedByNode: 'node-1', acceptedTimestamp: time },
  },
  DataDownload: {
    apiVersion: 'velero.io/v2alpha1',
    kind: 'DataDownload',
    metadata: meta('nightly-1-dd1'),
    spec: {
      targetVolume: { pvc: 'data', pv: '', namespace: 'app' },
      backupStorageLocation: 'default',
      snapshotID: 'k0123',
      sourceNamespace: 'app',
      operationTimeout: '10m0s',
      nodeOS: 'auto',
    },
    status: { phase: 'Prepared', progress: {} },
  },
};

/** Per kind, a spec field and a value of the wrong type for it. */
export const wrongTypeFields: { [K in KindName]: { field: string; value: unknown } } = {
  Backup: { field: 'spec.includedNamespaces', value: 'app' },
  Restore: { field: 'spec.restorePVs', value: 'yes' },
  Schedule: { field: 'spec.paused', value: 1 },
  BackupStorageLocation: { field: 'spec.default', value: 'true' },
  VolumeSnapshotLocation: { field: 'spec.provider', value: 42 },
  PodVolumeBackup: { field: 'spec.volume', value: ['data'] },
  PodVolumeRestore: { field: 'spec.snapshotID', value: 7 },
  BackupRepository: { field: 'spec.volumeNamespace', value: false },
  DeleteBackupRequest: { field: 'spec.backupName', value: { name: 'x' } },
  DownloadRequest: { field: 'spec.target', value: 'BackupLog/nightly-1' },
  ServerStatusRequest: { field: 'status.serverVersion', value: 1 },
  DataUpload: { field: 'spec.cancel', value: 'no' },
  DataDownload: { field: 'spec.targetVolume.pvc', value: 3 },
};

/** Per kind, a required spec field (absent for kinds whose spec has none). */
export const requiredSpecFields: { [K in KindName]?: string } = {
  Schedule: 'schedule',
  BackupStorageLocation: 'provider',
  VolumeSnapshotLocation: 'provider',
  PodVolumeBackup: 'repoIdentifier',
  PodVolumeRestore: 'sourceNamespace',
  BackupRepository: 'maintenanceFrequency',
  DeleteBackupRequest: 'backupName',
  DownloadRequest: 'target',
  DataUpload: 'operationTimeout',
  DataDownload: 'snapshotID',
};

/** Sets a dotted path ("spec.a.b") on a deep copy of `obj`. */
export function withField<T>(obj: T, path: string, value: unknown): T {
  const copy = structuredClone(obj) as Record<string, unknown>;
  const keys = path.split('.');
  let node: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  const last = keys[keys.length - 1] as string;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy as T;
}
