/**
 * Label, annotation and finalizer keys Velero puts on objects (docs/api.md). cairn uses the same keys
 * so that objects it creates are found by Velero and the other way round. Label *values* derived from names must go
 * through `labelValue()` (names.ts), as Velero does.
 */

export const Group = 'velero.io';
export const V1 = 'v1';
export const V2Alpha1 = 'v2alpha1';
export const ApiVersionV1 = `${Group}/${V1}` as const;
export const ApiVersionV2Alpha1 = `${Group}/${V2Alpha1}` as const;

/** Namespace Velero (and cairn, so habits carry over) installs into. */
export const DefaultNamespace = 'velero';

export const Labels = {
  /** On PVB, DataUpload, DeleteBackupRequest, restored objects: the backup name (label-value form). */
  BackupName: 'velero.io/backup-name',
  BackupUID: 'velero.io/backup-uid',
  RestoreName: 'velero.io/restore-name',
  RestoreUID: 'velero.io/restore-uid',
  /** On backups created by a schedule. */
  ScheduleName: 'velero.io/schedule-name',
  /** On Backups and BackupRepositories: the BackupStorageLocation name. */
  StorageLocation: 'velero.io/storage-location',
  /** On PVRs: UID of the restored pod, used to map pod events to PVRs. */
  PodUID: 'velero.io/pod-uid',
  PVCUID: 'velero.io/pvc-uid',
  /** BackupRepository lookup labels (with StorageLocation). */
  VolumeNamespace: 'velero.io/volume-namespace',
  RepositoryType: 'velero.io/repository-type',
  /** On the hosting pod of a PodVolumeBackup / PodVolumeRestore: the CR's name. */
  PodVolumeBackup: 'velero.io/pod-volume-backup',
  PodVolumeRestore: 'velero.io/pod-volume-restore',
  /** On data-mover hosting pods. */
  DataUpload: 'velero.io/data-upload',
  DataDownload: 'velero.io/data-download',
  DataUploadSnapshotInfo: 'velero.io/data-upload-snapshot-info',
  /** "true" on PVB/PVR/DU/DD while Accepted/Prepared; counted against the prepare queue. */
  ExposeOnGoing: 'velero.io/expose-on-going',
  ExposerPodGroup: 'velero.io/exposer-pod-group',
  AsyncOperationID: 'velero.io/async-operation-id',
  /** "true" on any object or namespace keeps it out of backups. */
  ExcludeFromBackup: 'velero.io/exclude-from-backup',
  /** Default VolumeGroupSnapshot grouping key on PVCs. */
  VolumeGroup: 'velero.io/volume-group',
  ResourceUsage: 'velero.io/resource-usage',
  PVCNamespaceName: 'velero.io/pvc-namespace-name',
  DynamicPVRestore: 'velero.io/dynamic-pv-restore',
  VolumeSnapshotName: 'velero.io/volume-snapshot-name',
  VolumeSnapshotClassSelector: 'velero.io/csi-volumesnapshot-class',
  VolumeGroupSnapshotClassDefault: 'velero.io/csi-volumegroupsnapshot-class',
  PluginConfig: 'velero.io/plugin-config',
  GCFailure: 'velero.io/gc-failure',
  /** On repository maintenance Jobs. */
  RepoName: 'velero.io/repo-name',
  /** node-agent pods: `role=node-agent` is how "node-agent runs on node X" is checked. */
  NodeAgentRole: 'role',
  NodeAgentName: 'name',
} as const;
export type LabelKey = (typeof Labels)[keyof typeof Labels];

/** Values that go with some label keys. */
export const LabelValues = {
  NodeAgent: 'node-agent',
  True: 'true',
  ResourceUsageDataUpload: 'DataUpload',
  ExposerPodGroupSnapshot: 'snapshot-exposer',
  ExposerPodGroupGenericRestore: 'generic-restore-exposer',
} as const;

export const Annotations = {
  /** On a workload Pod: comma-separated volume names to back up with fs-backup (opt-in). */
  BackupVolumes: 'backup.velero.io/backup-volumes',
  /** On a workload Pod: comma-separated volume names to skip when defaultVolumesToFsBackup is true (opt-out). */
  BackupVolumesExcludes: 'backup.velero.io/backup-volumes-excludes',
  /** On a PVB: the PVC name backing the volume. */
  PVCName: 'velero.io/pvc-name',
  /** On a Backup/Restore: overrides the server's fs-backup timeout (Go duration). */
  PodVolumeTimeout: 'velero.io/pod-volume-timeout',
  SourceClusterK8sGitVersion: 'velero.io/source-cluster-k8s-gitversion',
  SourceClusterK8sMajorVersion: 'velero.io/source-cluster-k8s-major-version',
  SourceClusterK8sMinorVersion: 'velero.io/source-cluster-k8s-minor-version',
  /** On a Backup: the server's resource timeout, for plugins. */
  ResourceTimeout: 'velero.io/resource-timeout',
  /** On a restored PV that was renamed. */
  OriginalPVName: 'velero.io/original-pv-name',
  /** On any backed-up object: "true"/"false" overrides restoreStatus include/exclude. */
  RestoreStatus: 'velero.io/restore-status',
  /** Legacy per-volume snapshot id on Pods: `snapshot.velero.io/<volume>`; use legacySnapshotAnnotation(). */
  LegacySnapshotPrefix: 'snapshot.velero.io/',
  MustIncludeAdditionalItems: 'backup.velero.io/must-include-additional-items',
  SkippedNoCSIPV: 'backup.velero.io/skipped-no-csi-pv',
  VolumeSnapshotHandle: 'velero.io/csi-volumesnapshot-handle',
  VolumeSnapshotRestoreSize: 'velero.io/csi-volumesnapshot-restore-size',
  CSIDriverName: 'velero.io/csi-driver-name',
  VSCDeletionPolicy: 'velero.io/csi-vsc-deletion-policy',
  DataUploadName: 'velero.io/data-upload-name',
  VolumeGroupSnapshotClassPVC: 'velero.io/csi-volume-group-snapshot-class',
  /** On a Backup: `velero.io/csi-volumegroupsnapshot-class_<driver>`. */
  VolumeGroupSnapshotClassBackupPrefix: 'velero.io/csi-volumegroupsnapshot-class_',
  /** On a Backup: `velero.io/csi-volumesnapshot-class_<driver>`. */
  VolumeSnapshotClassBackupPrefix: 'velero.io/csi-volumesnapshot-class_',
  /** On a PVC: the VolumeSnapshotClass to snapshot it with (Velero's key; same text as the class selector label). */
  VolumeSnapshotClassPVC: 'velero.io/csi-volumesnapshot-class',
  /** Backup exec hooks on Pods (`pre.` / `post.`; un-prefixed legacy form means pre). */
  PreBackupHookContainer: 'pre.hook.backup.velero.io/container',
  PreBackupHookCommand: 'pre.hook.backup.velero.io/command',
  PreBackupHookOnError: 'pre.hook.backup.velero.io/on-error',
  PreBackupHookTimeout: 'pre.hook.backup.velero.io/timeout',
  PostBackupHookContainer: 'post.hook.backup.velero.io/container',
  PostBackupHookCommand: 'post.hook.backup.velero.io/command',
  PostBackupHookOnError: 'post.hook.backup.velero.io/on-error',
  PostBackupHookTimeout: 'post.hook.backup.velero.io/timeout',
  LegacyBackupHookContainer: 'hook.backup.velero.io/container',
  LegacyBackupHookCommand: 'hook.backup.velero.io/command',
  LegacyBackupHookOnError: 'hook.backup.velero.io/on-error',
  LegacyBackupHookTimeout: 'hook.backup.velero.io/timeout',
  /** Restore exec hook on Pods. */
  PostRestoreHookContainer: 'post.hook.restore.velero.io/container',
  PostRestoreHookCommand: 'post.hook.restore.velero.io/command',
  PostRestoreHookOnError: 'post.hook.restore.velero.io/on-error',
  PostRestoreHookExecTimeout: 'post.hook.restore.velero.io/exec-timeout',
  PostRestoreHookWaitTimeout: 'post.hook.restore.velero.io/wait-timeout',
  PostRestoreHookWaitForReady: 'post.hook.restore.velero.io/wait-for-ready',
  /** Restore init-container hook on Pods. */
  InitRestoreHookContainerImage: 'init.hook.restore.velero.io/container-image',
  InitRestoreHookContainerName: 'init.hook.restore.velero.io/container-name',
  InitRestoreHookCommand: 'init.hook.restore.velero.io/command',
  InitRestoreHookTimeout: 'init.hook.restore.velero.io/timeout',
  /** Kubernetes': on a claim whose class binds WaitForFirstConsumer, the node the scheduler chose for its first pod. */
  SelectedNode: 'volume.kubernetes.io/selected-node',
} as const;
export type AnnotationKey = (typeof Annotations)[keyof typeof Annotations];

/** `snapshot.velero.io/<volume>`: where pre-1.x Velero recorded a volume's snapshot id on the Pod. */
export function legacySnapshotAnnotation(volumeName: string): string {
  return `${Annotations.LegacySnapshotPrefix}${volumeName}`;
}

export const Finalizers = {
  /** Added by the node agent to PVBs and PVRs it has accepted. */
  PodVolume: 'velero.io/pod-volume-finalizer',
  /** Added by the node agent to DataUploads and DataDownloads. */
  DataUploadDownload: 'velero.io/data-upload-download-finalizer',
  /** On Restores: deleting the Restore removes its `restores/<name>/` objects first. */
  RestoreExternalResources: 'restores.velero.io/external-resources-finalizer',
  /** Protects VolumeSnapshotContents while a backup needs them. */
  VolumeSnapshotContentProtect: 'velero.io/volume-snapshot-content-protect-finalizer',
} as const;
export type FinalizerKey = (typeof Finalizers)[keyof typeof Finalizers];

/** Prefixes of async operation ids (label `velero.io/async-operation-id`). */
export const AsyncOperationIDPrefix = {
  DataUpload: 'du-',
  DataDownload: 'dd-',
} as const;

/** Secret holding the backup repository password (same name/key as Velero so repositories are shared). */
export const RepoCredentials = {
  SecretName: 'velero-repo-credentials',
  Key: 'repository-password',
} as const;
