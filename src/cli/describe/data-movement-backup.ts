/**
 * The data-moved volumes in `backup describe`'s "CSI Snapshots:" section: Velero's lines (Operation ID, Data Mover,
 * Uploader Type, Moved data Size (bytes), Result) from the backup's volume info, and — cairn's addition, as for pod
 * volumes — with --details each DataUpload's name, phase, node and, while it runs, its live progress, read from the
 * cluster. While a backup waits, an entry whose result is not known yet is rebuilt from its live DataUpload, so the
 * size and phase are current; a DataUpload not in the stored volume info yet gets its own entry.
 */
import type { DataUpload } from '../../api/index.js';
import { dataMovementVolumeInfo } from '../../server/datamover/backup-tracking.js';
import type { BackupVolumeInfo } from '../../api/volume-info.js';
import { phaseGroup, type Describer } from './describer.js';
import { progressText } from './pod-volumes.js';

/** One CSI entry of the section and the DataUpload behind it, when the cluster still has it. */
export interface CsiSnapshotView {
  info: BackupVolumeInfo;
  dataUpload?: DataUpload | undefined;
}

const claimKey = (ns: string | undefined, name: string | undefined) => `${ns ?? ''}/${name ?? ''}`;

/** The CSI entries to show: the stored ones (refreshed from live DataUploads while unfinished) plus unlisted DataUploads. */
export function csiSnapshotViews(infos: readonly BackupVolumeInfo[], dataUploads: readonly DataUpload[]): CsiSnapshotView[] {
  const byClaim = new Map(dataUploads.map((du) => [claimKey(du.spec.sourceNamespace, du.spec.sourcePVC), du]));
  const seen = new Set<string>();
  const views: CsiSnapshotView[] = [];
  for (const info of infos.filter((v) => v.backupMethod === 'CSISnapshot')) {
    const key = claimKey(info.pvcNamespace, info.pvcName);
    const du = info.snapshotDataMoved ? byClaim.get(key) : undefined;
    if (du) seen.add(key);
    views.push({ info: du && !info.result ? dataMovementVolumeInfo(du, info) : info, ...(du ? { dataUpload: du } : {}) });
  }
  for (const [key, du] of byClaim) if (!seen.has(key)) views.push({ info: dataMovementVolumeInfo(du), dataUpload: du });
  return views;
}

const RUNNING = new Set(['InProgress', 'Canceling']);

/** The "CSI Snapshots:" lines (indent: one tab for the heading, as in Velero's "Backup Volumes:" block). */
export function describeCsiSnapshots(d: Describer, views: readonly CsiSnapshotView[], details: boolean, legacy: boolean): void {
  if (!views.length) {
    d.line(legacy ? '\tCSI Snapshots: <none included or not detectable>' : '\tCSI Snapshots: <none included>');
    return;
  }
  d.line('\tCSI Snapshots:');
  for (const { info: v, dataUpload } of views) {
    d.line(`\t\t${v.pvcNamespace ?? ''}/${v.pvcName ?? ''}:`);
    if (v.preserveLocalSnapshot) {
      if (!details) d.line('\t\t\tSnapshot: included, specify --details for more information');
      else {
        d.line('\t\t\tSnapshot:');
        if (!v.snapshotDataMoved && v.csiSnapshotInfo?.operationID) d.line(`\t\t\t\tOperation ID: ${v.csiSnapshotInfo.operationID}`);
        d.line(`\t\t\t\tSnapshot Content Name: ${v.csiSnapshotInfo?.vscName ?? ''}`);
        d.line(`\t\t\t\tStorage Snapshot ID: ${v.csiSnapshotInfo?.snapshotHandle ?? ''}`);
        d.line(`\t\t\t\tSnapshot Size (bytes): ${v.csiSnapshotInfo?.size ?? 0}`);
        d.line(`\t\t\t\tCSI Driver: ${v.csiSnapshotInfo?.driver ?? ''}`);
        d.line(`\t\t\t\tResult: ${v.result ?? ''}`);
      }
    }
    if (!v.snapshotDataMoved) continue;
    if (!details) {
      d.line('\t\t\tData Movement: included, specify --details for more information');
      continue;
    }
    const m = v.snapshotDataMovementInfo;
    d.line('\t\t\tData Movement:');
    d.line(`\t\t\t\tOperation ID: ${m?.operationID ?? ''}`);
    d.line(`\t\t\t\tData Mover: ${m?.dataMover || 'velero'}`);
    d.line(`\t\t\t\tUploader Type: ${m?.uploaderType ?? ''}`);
    d.line(`\t\t\t\tMoved data Size (bytes): ${m?.size ?? 0}`);
    d.line(`\t\t\t\tResult: ${v.result ?? ''}`);
    if (dataUpload) describeDataUpload(d, dataUpload);
  }
}

/** cairn's lines for a live DataUpload: which one, its phase, node, progress while it runs, and its message. */
function describeDataUpload(d: Describer, du: DataUpload): void {
  const s = du.status ?? {};
  const phase = s.phase ?? '';
  d.line(`\t\t\t\tData Upload: ${du.metadata.name ?? ''}`);
  d.line(`\t\t\t\tPhase: ${phaseGroup(phase)}`);
  const node = s.node || s.acceptedByNode;
  if (node) d.line(`\t\t\t\tNode: ${node}`);
  if (RUNNING.has(phase) || (phase !== 'Completed' && s.progress?.totalBytes !== undefined)) d.line(`\t\t\t\tProgress: ${progressText(s.progress?.bytesDone, s.progress?.totalBytes)}`);
  if (s.snapshotID) d.line(`\t\t\t\tSnapshot ID: ${s.snapshotID}`);
  if (s.message) d.line(`\t\t\t\tMessage: ${s.message}`);
}
