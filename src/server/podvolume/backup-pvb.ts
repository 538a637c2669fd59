/**
 * The PodVolumeBackup object the server creates for one pod volume, exactly as Velero builds it
 * (docs/fs-backup.md): generateName `<backup>-`, controller reference to the Backup, labels backup-name /
 * backup-uid (+ pvc-uid), annotation pvc-name for PVC volumes, tags, empty repoIdentifier, uploader kopia.
 */
import {
  Annotations,
  Labels,
  PodVolumeBackupPhase,
  controllerReference,
  labelValue,
  newPodVolumeBackup,
  type Backup,
  type PodVolumeBackup,
} from '../../api/index.js';
import type { ClaimInfo, PodLike } from './backup-volumes.js';

export const UPLOADER_KOPIA = 'kopia';

export interface PodVolumeBackupForOptions {
  backup: Backup;
  pod: PodLike;
  volume: string;
  claim?: ClaimInfo;
}

export function podVolumeBackupFor(opts: PodVolumeBackupForOptions): PodVolumeBackup {
  const { backup, pod, volume } = opts;
  const backupName = backup.metadata.name ?? '';
  const backupUid = backup.metadata.uid ?? '';
  const podNs = pod.metadata.namespace ?? '';
  const podUid = pod.metadata.uid ?? '';
  const pvc = opts.claim?.pvc;
  const labels: Record<string, string> = { [Labels.BackupName]: labelValue(backupName), [Labels.BackupUID]: backupUid };
  const tags: Record<string, string> = { backup: backupName, 'backup-uid': backupUid, pod: pod.metadata.name, 'pod-uid': podUid, ns: podNs, volume };
  if (pvc) {
    labels[Labels.PVCUID] = pvc.metadata.uid ?? '';
    tags['pvc-uid'] = pvc.metadata.uid ?? '';
  }
  const parallel = backup.spec?.uploaderConfig?.parallelFilesUpload;
  return newPodVolumeBackup({
    namespace: backup.metadata.namespace ?? '',
    generateName: `${backupName}-`,
    labels,
    ...(pvc ? { annotations: { [Annotations.PVCName]: pvc.metadata.name } } : {}),
    ownerReferences: [controllerReference({ apiVersion: backup.apiVersion ?? 'velero.io/v1', kind: 'Backup', metadata: backup.metadata })],
    spec: {
      node: pod.spec?.nodeName ?? '',
      pod: { kind: 'Pod', namespace: podNs, name: pod.metadata.name, uid: podUid },
      volume,
      backupStorageLocation: backup.spec?.storageLocation ?? '',
      repoIdentifier: '',
      uploaderType: UPLOADER_KOPIA,
      tags,
      ...(parallel && parallel > 0 ? { uploaderSettings: { ParallelFilesUpload: String(parallel) } } : {}),
    },
  });
}

/** The key that makes a PVB unique within one backup: one per (pod uid, volume). */
export function podVolumeKey(pvb: Pick<PodVolumeBackup, 'spec'>): string {
  return `${pvb.spec.pod.uid ?? ''}/${pvb.spec.volume}`;
}

const TERMINAL: ReadonlySet<string> = new Set([PodVolumeBackupPhase.Completed, PodVolumeBackupPhase.Failed, PodVolumeBackupPhase.Canceled]);

export function isTerminal(pvb: Pick<PodVolumeBackup, 'status'>): boolean {
  return TERMINAL.has(pvb.status?.phase ?? '');
}

export function succeeded(pvb: Pick<PodVolumeBackup, 'status'>): boolean {
  return pvb.status?.phase === PodVolumeBackupPhase.Completed;
}

/** Velero's line in the backup's errors for a PVB that did not complete. */
export function podVolumeBackupError(pvb: Pick<PodVolumeBackup, 'status' | 'metadata' | 'spec'>, timedOut = false): string | undefined {
  const phase = pvb.status?.phase ?? '';
  const message = pvb.status?.message ?? '';
  if (phase === PodVolumeBackupPhase.Failed) return `pod volume backup failed: ${message}`;
  if (phase === PodVolumeBackupPhase.Canceled) return `pod volume backup canceled: ${message}`;
  if (timedOut && !TERMINAL.has(phase)) {
    return `pod volume backup timed out: ${pvb.metadata.name ?? ''} (volume ${pvb.spec.volume} of pod ${pvb.spec.pod.namespace ?? ''}/${pvb.spec.pod.name ?? ''}) was still ${phase || 'New'}`;
  }
  return undefined;
}
