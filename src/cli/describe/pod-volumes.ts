/**
 * The pod-volume (fs-backup) part of `backup describe` and `restore describe`. Velero's layout (phase groups of
 * `<ns>/<pod>: <volumes>`) comes first; with --details cairn adds one block per volume with its method, snapshot ID,
 * size and, while the data mover runs, its live progress. Every line is derived from one `PodVolumeView`, built from
 * the live PodVolumeBackups/PodVolumeRestores in the cluster or, when the cluster has none (e.g. they were deleted),
 * from the backup's stored volume info.
 */
import { Annotations, type PodVolumeBackup, type PodVolumeRestore } from '../../api/index.js';
import type { BackupVolumeInfo } from '../../api/volume-info.js';
import { formatGoTime } from '../backups.js';
import { NONE, phaseGroup, type Describer } from './describer.js';

/** One pod volume as describe shows it, whatever it was read from. */
export interface PodVolumeView {
  namespace: string;
  pod: string;
  volume: string;
  /** The PVB/PVR phase as stored (`''` for a new object). */
  phase: string;
  uploaderType: string;
  /** `PodVolumeBackup` or `PodVolumeRestore` (volume info's method names). */
  method: string;
  node?: string | undefined;
  pvcName?: string | undefined;
  snapshotID?: string | undefined;
  totalBytes?: number | undefined;
  bytesDone?: number | undefined;
  message?: string | undefined;
  started?: string | undefined;
  completed?: string | undefined;
}

/** The status a PVB, PVR or DataDownload shows alike: phase, progress, message and times. */
export type TransferView = Pick<PodVolumeView, 'phase' | 'totalBytes' | 'bytesDone' | 'message' | 'started' | 'completed'>;

/** The part of a PVB/PVR/DataDownload status a TransferView is read from. */
interface TransferStatus {
  phase?: string | undefined;
  progress?: { totalBytes?: number | undefined; bytesDone?: number | undefined } | null | undefined;
  message?: string | null | undefined;
  startTimestamp?: string | null | undefined;
  completionTimestamp?: string | null | undefined;
}

export function transferView(status: TransferStatus | null | undefined): TransferView {
  return {
    phase: status?.phase ?? '',
    totalBytes: status?.progress?.totalBytes,
    bytesDone: status?.progress?.bytesDone,
    message: status?.message || undefined,
    started: status?.startTimestamp ?? undefined,
    completed: status?.completionTimestamp ?? undefined,
  };
}

/** Velero orders PVB phase groups this way. */
export const PVB_PHASE_ORDER = ['Completed', 'Failed', 'Canceled', 'In Progress', 'Canceling', 'Prepared', 'Accepted', 'New'] as const;
/** …and PVR phase groups this way. */
export const PVR_PHASE_ORDER = ['Completed', 'Canceled', 'Failed', 'In Progress', 'Prepared', 'Accepted', 'New'] as const;

export function podVolumeBackupViews(pvbs: readonly PodVolumeBackup[]): PodVolumeView[] {
  return sortViews(
    pvbs.map((p) => ({
      ...podVolumeOf(p),
      ...transferView(p.status),
      method: 'PodVolumeBackup',
      node: p.spec.node || undefined,
      pvcName: p.metadata.annotations?.[Annotations.PVCName],
      snapshotID: p.status?.snapshotID || undefined,
    })),
  );
}

/** The fs-backup entries of a backup's volume info (what is left when the PVBs are gone from the cluster). */
export function volumeInfoViews(infos: readonly BackupVolumeInfo[]): PodVolumeView[] {
  return sortViews(
    infos
      .filter((v) => v.backupMethod === 'PodVolumeBackup' && v.pvbInfo)
      .map((v) => ({
        namespace: v.pvbInfo?.podNamespace ?? '',
        pod: v.pvbInfo?.podName ?? '',
        volume: v.pvbInfo?.volumeName ?? '',
        phase: v.pvbInfo?.Phase ?? '',
        uploaderType: v.pvbInfo?.uploaderType || 'kopia',
        method: 'PodVolumeBackup',
        node: v.pvbInfo?.nodeName || undefined,
        pvcName: v.pvcName || undefined,
        snapshotID: v.pvbInfo?.snapshotHandle || undefined,
        totalBytes: v.pvbInfo?.size,
        started: v.startTimestamp,
        completed: v.completionTimestamp,
      })),
  );
}

export function podVolumeRestoreViews(pvrs: readonly PodVolumeRestore[]): PodVolumeView[] {
  return sortViews(
    pvrs.map((p) => ({
      ...podVolumeOf(p),
      ...transferView(p.status),
      method: 'PodVolumeRestore',
      // A PVR's node is where it ran (its status); a PVB's is the one it was made for (its spec).
      node: p.status?.node || undefined,
      snapshotID: p.spec.snapshotID || undefined,
    })),
  );
}

/** The pod volume a PVB or PVR is about, and its uploader. */
function podVolumeOf(p: PodVolumeBackup | PodVolumeRestore): Pick<PodVolumeView, 'namespace' | 'pod' | 'volume' | 'uploaderType'> {
  return { namespace: p.spec.pod.namespace ?? '', pod: p.spec.pod.name ?? '', volume: p.spec.volume, uploaderType: p.spec.uploaderType || 'kopia' };
}

function sortViews(views: PodVolumeView[]): PodVolumeView[] {
  const key = (v: PodVolumeView) => `${v.namespace}\u0000${v.pod}\u0000${v.volume}`;
  return views.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** `ns/pod: v1, v2` per pod, pods and volumes sorted (Velero's --details list). */
function volumesByPod(views: readonly PodVolumeView[]): string[] {
  const groups = new Map<string, string[]>();
  for (const v of views) {
    const k = `${v.namespace}/${v.pod}`;
    groups.set(k, [...(groups.get(k) ?? []), v.volume]);
  }
  return [...groups.keys()].sort().map((k) => `${k}: ${(groups.get(k) ?? []).sort().join(', ')}`);
}

/**
 * Velero's phase groups: without details `<Phase>:\t<count>`, with details `<Phase>:` then `ns/pod: volumes`.
 * `indent` is the number of tabs of the group lines.
 */
export function describePhaseGroups(d: Describer, views: readonly PodVolumeView[], order: readonly string[], indent: number, details: boolean): void {
  const pre = '\t'.repeat(indent);
  for (const group of order) {
    const members = views.filter((v) => phaseGroup(v.phase) === group);
    if (!members.length) continue;
    if (!details) {
      d.line(`${pre}${group}:\t${members.length}`);
      continue;
    }
    d.line(`${pre}${group}:`);
    for (const l of volumesByPod(members)) d.line(`${pre}\t${l}`);
  }
}

/** `<done> of <total> bytes (<pct>%)`; the percentage is floored so 100% means done. */
export function progressText(bytesDone: number | undefined, totalBytes: number | undefined): string {
  const done = bytesDone ?? 0;
  const total = totalBytes ?? 0;
  if (total <= 0) return `${done} of ${total} bytes`;
  const pct = Math.min(100, Math.floor((done * 100) / total));
  return `${done} of ${total} bytes (${pct}%)`;
}

const RUNNING_PHASES = new Set(['InProgress', 'Canceling']);

/**
 * The fields every per-volume detail block (pod volume or data download) ends with: the size once Completed, else
 * the progress while it runs or once one was reported; the start and completion times; the message.
 */
export function describeTransferFields(field: (name: string, value: string) => void, v: TransferView): void {
  if (v.phase === 'Completed') field('Size (bytes)', String(v.totalBytes ?? 0));
  else if (RUNNING_PHASES.has(v.phase) || v.totalBytes !== undefined) field('Progress', progressText(v.bytesDone, v.totalBytes));
  const started = formatGoTime(v.started);
  const completed = formatGoTime(v.completed);
  if (started) field('Started', started);
  if (completed) field('Completed', completed);
  if (v.message) field('Message', v.message);
}

/**
 * One block per volume (`ns/pod/volume:` then aligned fields), in the order of `views`. `indent` is the number of
 * tabs of the volume heading lines.
 */
export function describePodVolumeDetails(d: Describer, views: readonly PodVolumeView[], indent: number): void {
  const pre = '\t'.repeat(indent);
  for (const v of views) {
    d.line(`${pre}${v.namespace}/${v.pod}/${v.volume}:`);
    const field = (name: string, value: string) => d.line(`${pre}\t${name}:\t${value}`);
    field('Phase', phaseGroup(v.phase));
    if (v.pvcName) field('PVC', v.pvcName);
    field('Method', `${v.method} (${v.uploaderType})`);
    if (v.node) field('Node', v.node);
    field('Snapshot ID', v.snapshotID ?? NONE);
    describeTransferFields(field, v);
  }
}
