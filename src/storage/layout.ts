/**
 * Object keys of a backup storage location, exactly as Velero lays them out (docs/backup.md), relative
 * to the location's bucket/prefix. Every key cairn reads or writes in a location comes from here.
 */
export const TopLevelDirs = ['backups', 'restores', 'kopia', 'restic', 'metadata', 'plugins', 'cairn'] as const;

/** What a backup directory holds; keys of BackupFiles map to file names through `backupFileKey`. */
export const BackupFileKinds = {
  metadata: 'velero-backup.json',
  contents: '.tar.gz',
  log: '-logs.gz',
  podVolumeBackups: '-podvolumebackups.json.gz',
  volumeSnapshots: '-volumesnapshots.json.gz',
  itemOperations: '-itemoperations.json.gz',
  resourceList: '-resource-list.json.gz',
  results: '-results.gz',
  volumeInfo: '-volumeinfo.json.gz',
  csiVolumeSnapshotClasses: '-csi-volumesnapshotclasses.json.gz',
  csiVolumeSnapshots: '-csi-volumesnapshots.json.gz',
  csiVolumeSnapshotContents: '-csi-volumesnapshotcontents.json.gz',
} as const;
export type BackupFileKind = keyof typeof BackupFileKinds;

export const RestoreFileKinds = {
  log: 'logs.gz',
  results: 'results.gz',
  resourceList: 'resource-list.json.gz',
  itemOperations: 'itemoperations.json.gz',
  volumeInfo: 'volumeinfo.json.gz',
} as const;
export type RestoreFileKind = keyof typeof RestoreFileKinds;

export const backupsPrefix = 'backups/';
export const restoresPrefix = 'restores/';

export function backupDir(name: string): string {
  return `${backupsPrefix}${name}/`;
}

export function backupFileKey(name: string, kind: BackupFileKind): string {
  const suffix = BackupFileKinds[kind];
  return kind === 'metadata' ? `${backupDir(name)}${suffix}` : `${backupDir(name)}${name}${suffix}`;
}

export function restoreDir(name: string): string {
  return `${restoresPrefix}${name}/`;
}

/** Restore files are `restore-<name>-<suffix>` except volume info, which Velero names `<name>-volumeinfo.json.gz`. */
export function restoreFileKey(name: string, kind: RestoreFileKind): string {
  const suffix = RestoreFileKinds[kind];
  return kind === 'volumeInfo' ? `${restoreDir(name)}${name}-${suffix}` : `${restoreDir(name)}restore-${name}-${suffix}`;
}

/** Where fs-backup / data-mover repositories of one volume namespace live (cairn's own format, see docs). */
export function repositoryPrefix(volumeNamespace: string): string {
  return `kopia/${volumeNamespace}/`;
}

/** DownloadRequest target kinds (docs/storage-locations.md) → object key. */
export const DownloadTargetKinds = {
  BackupContents: (n: string) => backupFileKey(n, 'contents'),
  BackupLog: (n: string) => backupFileKey(n, 'log'),
  BackupVolumeSnapshots: (n: string) => backupFileKey(n, 'volumeSnapshots'),
  BackupItemOperations: (n: string) => backupFileKey(n, 'itemOperations'),
  BackupResourceList: (n: string) => backupFileKey(n, 'resourceList'),
  BackupResults: (n: string) => backupFileKey(n, 'results'),
  BackupVolumeInfos: (n: string) => backupFileKey(n, 'volumeInfo'),
  CSIBackupVolumeSnapshots: (n: string) => backupFileKey(n, 'csiVolumeSnapshots'),
  CSIBackupVolumeSnapshotContents: (n: string) => backupFileKey(n, 'csiVolumeSnapshotContents'),
  RestoreLog: (n: string) => restoreFileKey(n, 'log'),
  RestoreResults: (n: string) => restoreFileKey(n, 'results'),
  RestoreResourceList: (n: string) => restoreFileKey(n, 'resourceList'),
  RestoreItemOperations: (n: string) => restoreFileKey(n, 'itemOperations'),
  RestoreVolumeInfo: (n: string) => restoreFileKey(n, 'volumeInfo'),
} as const;
export type DownloadTargetKind = keyof typeof DownloadTargetKinds;

export function downloadKey(kind: DownloadTargetKind, name: string): string {
  return DownloadTargetKinds[kind](name);
}
