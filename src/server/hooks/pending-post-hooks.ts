/**
 * Post hooks that wait for a pod's volumes: Velero runs a pod's post hooks once its PodVolumeBackups have ended
 * (and, for data-mover claims, once the snapshot is taken). cairn's backup does not wait for those inside the run,
 * so the pods whose post hooks wait are recorded on the Backup (annotation `backup.cairn.io/pending-post-hooks`,
 * with the hooks resolved when the pod was backed up) and run by the operations controller when their volumes
 * allow. The record is written as soon as a pod's post hooks are put off, so a server that stops in the middle of
 * a backup still knows, when it starts again, which pods ran a pre hook without their post hook (it runs those
 * first: a pod is never left frozen by a restart).
 */
import { DataUploadPhase, PodVolumeBackupPhase, type DataUpload, type PodVolumeBackup } from '../../api/index.js';
import type { ResolvedExecHook } from './backup-hooks.js';
import { readJsonListAnnotation, writeJsonListAnnotation } from './json-list-annotation.js';

export const PENDING_POST_HOOKS_ANNOTATION = 'backup.cairn.io/pending-post-hooks';

export interface PendingPostHooks {
  namespace: string;
  pod: string;
  uid: string;
  /** Claims of the pod whose data may be moved (a DataUpload's snapshot must be taken first). */
  claims: string[];
  hooks: ResolvedExecHook[];
}

export function readPendingPostHooks(annotations: Readonly<Record<string, string>> | undefined): PendingPostHooks[] {
  return readJsonListAnnotation(annotations, PENDING_POST_HOOKS_ANNOTATION);
}

export function writePendingPostHooks(annotations: Record<string, string>, pending: readonly PendingPostHooks[]): void {
  writeJsonListAnnotation(annotations, PENDING_POST_HOOKS_ANNOTATION, pending);
}

export const samePod = (a: Pick<PendingPostHooks, 'namespace' | 'pod'>, b: Pick<PendingPostHooks, 'namespace' | 'pod'>) => a.namespace === b.namespace && a.pod === b.pod;

const PVB_DONE: ReadonlySet<string> = new Set([PodVolumeBackupPhase.Completed, PodVolumeBackupPhase.Failed, PodVolumeBackupPhase.Canceled]);
/** DataUpload phases reached only once its snapshot is taken (or never to be taken). */
const SNAPSHOT_TAKEN: ReadonlySet<string> = new Set([DataUploadPhase.Prepared, DataUploadPhase.InProgress, DataUploadPhase.Completed, DataUploadPhase.Failed, DataUploadPhase.Canceled, DataUploadPhase.Canceling]);

/**
 * Whether a pod's post hooks may run: every PodVolumeBackup of the pod has ended and every DataUpload of its claims
 * has its snapshot (`snapshotTaken` tells for those still before Prepared, from their VolumeSnapshot).
 */
export function postHooksReady(entry: PendingPostHooks, pvbs: readonly PodVolumeBackup[], dus: readonly DataUpload[], snapshotTaken: (du: DataUpload) => boolean): { ready: boolean; waitingFor: string[] } {
  const waitingFor: string[] = [];
  for (const pvb of pvbs) {
    if (pvb.spec.pod.namespace !== entry.namespace || pvb.spec.pod.name !== entry.pod) continue;
    if (!PVB_DONE.has(pvb.status?.phase ?? '')) waitingFor.push(`PodVolumeBackup ${pvb.metadata.name ?? ''}`);
  }
  for (const du of dus) {
    if (du.spec.sourceNamespace !== entry.namespace || !entry.claims.includes(du.spec.sourcePVC)) continue;
    if (!SNAPSHOT_TAKEN.has(du.status?.phase ?? '') && !snapshotTaken(du)) waitingFor.push(`the snapshot of DataUpload ${du.metadata.name ?? ''}`);
  }
  return { ready: waitingFor.length === 0, waitingFor };
}

/** The pod a pending entry names, as the hook runner needs it (its hooks are already resolved). */
export function pendingPod(entry: PendingPostHooks): { metadata: { name: string; namespace: string; uid: string } } {
  return { metadata: { name: entry.pod, namespace: entry.namespace, uid: entry.uid } };
}
