/**
 * Volumes a restore cannot bring back because their backup failed or was canceled: a pod volume whose
 * PodVolumeBackup did not complete, a claim whose DataUpload did not. Without this the restored pod starts on an
 * empty volume and the restore says Completed, which is a lie users act on.
 *
 * Each such volume is a warning in its namespace ("volume data of pod app/web was not restored: ..."), an entry in
 * the restore's volume info (`notRestored`, shown by `restore describe`), and, unless the restore itself leaves the
 * volume out (its filters exclude claims and volumes, restorePVs is false, or a resource modifier removed the volume
 * from the pod), a failure: one error names them all, so the restore ends PartiallyFailed.
 */
import { PodVolumeBackupPhase, type PodVolumeBackup } from '../../api/index.js';
import type { ResultsCollector } from '../../api/results.js';
import { inVeleroRestoreOrder, RestoreMethods, type RestoreVolumeInfo, type StoredBackupVolumeInfo } from '../../api/volume-info.js';
import type { PodVolumeSource } from '../podvolume/restore-volumes.js';

export interface NotRestoredVolume {
  /** The namespace the restore put the pod or claim in. */
  namespace: string;
  /** `volume "data" of pod web`, `persistent volume claim data-web`. */
  what: string;
  /** Why: what happened to its backup. */
  reason: string;
  /** The restore itself leaves this volume out: reported, but not a failure. */
  excluded: boolean;
  info: RestoreVolumeInfo;
}

function pvbReason(pvb: PodVolumeBackup): string {
  const phase = pvb.status?.phase || 'New';
  const name = pvb.metadata.name ?? '';
  const message = pvb.status?.message ? `: ${pvb.status.message}` : '';
  if (phase === PodVolumeBackupPhase.Failed) return `its backup (PodVolumeBackup ${name}) failed${message}`;
  if (phase === PodVolumeBackupPhase.Canceled) return `its backup (PodVolumeBackup ${name}) was canceled${message}`;
  return `its backup (PodVolumeBackup ${name}) never completed (phase ${phase})`;
}

export interface PodVolumesNotRestoredOptions {
  podVolumeBackups: readonly PodVolumeBackup[];
  /** The pod's name and namespace at backup time. */
  podName: string;
  sourceNamespace: string;
  /** Where the restore put it. */
  targetNamespace: string;
  /** The volumes the restored pod declares (a resource modifier may have removed some). */
  podVolumes: readonly PodVolumeSource[];
  /** False when the restore's filters leave pod volume data out (claims or volumes excluded). */
  podVolumeDataRestored: boolean;
}

/** The pod's volumes that have a backup which did not complete, and no completed one. */
export function podVolumesNotRestored(opts: PodVolumesNotRestoredOptions): NotRestoredVolume[] {
  const mine = opts.podVolumeBackups.filter((p) => p.spec.pod.name === opts.podName && p.spec.pod.namespace === opts.sourceNamespace);
  const byVolume = new Map<string, PodVolumeBackup[]>();
  for (const pvb of mine) byVolume.set(pvb.spec.volume, [...(byVolume.get(pvb.spec.volume) ?? []), pvb]);
  const declared = new Map(opts.podVolumes.map((v) => [v.name, v] as const));
  const out: NotRestoredVolume[] = [];
  for (const [volume, pvbs] of [...byVolume].sort(([a], [b]) => a.localeCompare(b))) {
    if (pvbs.some((p) => p.status?.phase === PodVolumeBackupPhase.Completed)) continue;
    const last = pvbs.at(-1)!;
    const claim = declared.get(volume)?.persistentVolumeClaim?.claimName;
    out.push({
      namespace: opts.targetNamespace,
      what: `volume "${volume}" of pod ${opts.podName}`,
      reason: pvbReason(last),
      excluded: !opts.podVolumeDataRestored || !declared.has(volume),
      info: inVeleroRestoreOrder({
        ...(claim ? { pvcName: claim, pvcNamespace: opts.targetNamespace } : {}),
        restoreMethod: RestoreMethods.PodVolumeRestore,
        snapshotDataMoved: false,
        pvrInfo: { uploaderType: last.spec.uploaderType || 'kopia', volumeName: volume, podName: opts.podName, podNamespace: opts.targetNamespace, Phase: last.status?.phase || 'New' },
        notRestored: pvbReason(last),
      }),
    });
  }
  return out;
}

export interface ClaimNotRestoredOptions {
  volumeInfos: readonly StoredBackupVolumeInfo[];
  /** The claim at backup time. */
  pvcName: string;
  sourceNamespace: string;
  targetNamespace: string;
  /** False when the restore leaves moved data out (restorePVs false). */
  movedDataRestored: boolean;
}

/** The claim, when the backup tried to move its data and that failed (its DataUpload Failed or Canceled). */
export function claimNotRestored(opts: ClaimNotRestoredOptions): NotRestoredVolume | undefined {
  const info = opts.volumeInfos.find((v) => v.pvcNamespace === opts.sourceNamespace && v.pvcName === opts.pvcName && v.snapshotDataMoved === true);
  if (!info || info.snapshotDataMovementInfo?.snapshotHandle) return undefined;
  const phase = info.snapshotDataMovementInfo?.Phase || (info.result === 'failed' ? 'Failed' : '');
  if (!phase || phase === 'Completed') return undefined;
  const operation = info.snapshotDataMovementInfo?.operationID ? ` (operation ${info.snapshotDataMovementInfo.operationID})` : '';
  const reason =
    phase === 'Failed' ? `its data movement${operation} failed` : phase === 'Canceled' ? `its data movement${operation} was canceled` : `its data movement${operation} never completed (phase ${phase})`;
  return {
    namespace: opts.targetNamespace,
    what: `persistent volume claim ${opts.pvcName}`,
    reason,
    excluded: !opts.movedDataRestored,
    info: inVeleroRestoreOrder({ pvcName: opts.pvcName, pvcNamespace: opts.targetNamespace, restoreMethod: RestoreMethods.CSISnapshot, snapshotDataMoved: true, notRestored: reason }),
  };
}

/** What one restore found, in the order found (a pod seen twice, after a server restart, is counted once). */
export class NotRestoredVolumes {
  private readonly found = new Map<string, NotRestoredVolume>();

  add(volumes: readonly NotRestoredVolume[]): void {
    for (const v of volumes) this.found.set(`${v.namespace}/${v.what}`, v);
  }

  get all(): NotRestoredVolume[] {
    return [...this.found.values()];
  }

  /** A warning per volume; one error naming those the restore did not leave out itself. */
  report(results: ResultsCollector): void {
    for (const v of this.found.values()) {
      const note = v.excluded ? ' (the restore leaves it out)' : '';
      results.warn({ kind: 'namespace', namespace: v.namespace }, `${v.what} was not restored${note}: ${v.reason}`);
    }
    const failed = this.all.filter((v) => !v.excluded);
    if (failed.length) {
      const list = failed.map((v) => `${v.namespace}: ${v.what}`).join('; ');
      results.error({ kind: 'velero' }, `${failed.length} volume(s) were not restored because their backup failed or was canceled (see the warnings): ${list}`);
    }
  }

  volumeInfos(): RestoreVolumeInfo[] {
    return this.all.map((v) => v.info);
  }
}
