/**
 * `restore describe` text in Velero's section order (docs/cli.md, restore). Pure: the caller fetches
 * the results, volume info and resource list and passes them in.
 */
import { deletionTimestampOf, type DataDownload, type PodVolumeRestore, type Restore, type RestoreOperation } from '../../api/index.js';
import type { RestoreVolumeInfo } from '../../api/volume-info.js';
import { formatGoTime, valueOr } from '../backups.js';
import type { RestoreDescription } from '../restores.js';
import type { Colours } from '../colour.js';
import { describeDataDownloads } from './data-movement-restore.js';
import {
  Describer,
  NONE,
  boolText,
  describeFetchedResourceList,
  describeLabelSelectors,
  describeMetadata,
  describeOperations,
  describeResults,
  describeValidationErrors,
  durationText,
  type DescribeFilesInput,
  listOr,
} from './describer.js';
import { PVR_PHASE_ORDER, describePhaseGroups, describePodVolumeDetails, podVolumeRestoreViews } from './pod-volumes.js';

/**
 * The files are the restore's `restore-<n>-results.gz`, `<n>-volumeinfo.json.gz` (the CSI section is shown only when
 * it exists), `restore-<n>-resource-list.json.gz` and `restore-<n>-itemoperations.json.gz`.
 */
export interface RestoreDescribeInput extends DescribeFilesInput<RestoreVolumeInfo, RestoreOperation> {
  restore: Restore;
  podVolumeRestores: readonly PodVolumeRestore[];
  /** The restore's DataDownloads (data-mover volumes), live from the cluster. */
  dataDownloads?: readonly DataDownload[];
}

/** The `-o json|yaml` shape of `restore describe` (documented in docs/cli.md). */
export function restoreDescription(input: Omit<RestoreDescribeInput, 'colours' | 'cli'>): RestoreDescription {
  return {
    apiVersion: 'cairn.io/v1',
    kind: 'RestoreDescription',
    restore: input.restore,
    results: valueOr(input.results),
    podVolumeRestores: [...input.podVolumeRestores],
    ...(input.dataDownloads ? { dataDownloads: [...input.dataDownloads] } : {}),
    volumeInfo: valueOr(input.volumeInfo),
    ...(input.details ? { details: { resourceList: valueOr(input.resourceList) } } : {}),
  };
}

export function describeRestore(input: RestoreDescribeInput): string {
  const { restore, colours: c } = input;
  const cli = input.cli ?? 'cairn';
  const name = restore.metadata.name ?? '';
  const status = restore.status ?? {};
  const spec = restore.spec;
  const d = new Describer();

  describeMetadata(d, restore.metadata, c);

  d.line();
  const phase = status.phase ?? 'New';
  const phaseText = phase + (deletionTimestampOf(restore) ? ' (Deleting)' : '');
  const note = phase === 'Failed' || phase === 'PartiallyFailed' ? ` (run '${cli} restore logs ${name}' for more information)` : '';
  d.line(`Phase:\t${c.phase(phase, phaseText)}${note}`);
  if (status.progress) {
    if (phase === 'InProgress') {
      d.line(`Estimated total items to be restored:\t${status.progress.totalItems ?? 0}`);
      d.line(`Items restored so far:\t${status.progress.itemsRestored ?? 0}`);
    } else {
      d.line(`Total items to be restored:\t${status.progress.totalItems ?? 0}`);
      d.line(`Items restored:\t${status.progress.itemsRestored ?? 0}`);
    }
  }

  d.line();
  d.line(`Started:\t${formatGoTime(status.startTimestamp) ?? '<n/a>'}`);
  d.line(`Completed:\t${formatGoTime(status.completionTimestamp) ?? '<n/a>'}`);

  describeValidationErrors(d, status.validationErrors, c);

  describeResults(d, { warnings: status.warnings ?? 0, errors: status.errors ?? 0 }, input.results, false);

  d.line();
  d.line(`Backup:\t${spec.backupName ?? ''}`);

  d.line();
  d.line('Namespaces:');
  const inc = spec.includedNamespaces ?? [];
  d.line(`\tIncluded:\t${!inc.length || (inc.length === 1 && inc[0] === '*') ? 'all namespaces found in the backup' : inc.join(', ')}`);
  d.line(`\tExcluded:\t${listOr(spec.excludedNamespaces, NONE)}`);

  d.line();
  d.line('Resources:');
  d.line(`\tIncluded:\t${listOr(spec.includedResources, '*')}`);
  d.line(`\tExcluded:\t${listOr(spec.excludedResources, NONE)}`);
  d.line(`\tCluster-scoped:\t${boolText(spec.includeClusterResources, 'excluded', 'included', 'auto')}`);

  d.line();
  d.map('Namespace mappings', spec.namespaceMapping);

  d.line();
  describeLabelSelectors(d, spec);

  d.line();
  d.line(`Restore PVs:\t${boolText(spec.restorePVs, 'false', 'true', 'auto')}`);

  if (input.podVolumeRestores.length) {
    d.line();
    describePodVolumeRestores(d, input.podVolumeRestores, input.details);
  }

  if (input.dataDownloads?.length) {
    d.line();
    describeDataDownloads(d, input.dataDownloads, input.details);
  }

  const notRestored = input.volumeInfo?.ok ? (input.volumeInfo.value ?? []).filter((v) => v.notRestored) : [];
  if (notRestored.length) {
    d.line();
    describeVolumesNotRestored(d, notRestored, c);
  }

  if (input.volumeInfo?.ok) {
    d.line();
    describeCsiSnapshotRestores(d, input.volumeInfo.value ?? [], input.details);
  }

  d.line();
  d.line(`Existing Resource Policy: \t${spec.existingResourcePolicy || NONE}`);
  d.line(`ItemOperationTimeout:\t${durationText(spec.itemOperationTimeout)}`);

  d.line();
  d.line(`Preserve Service NodePorts:\t${boolText(spec.preserveNodePorts, 'false', 'true', 'auto')}`);

  const uploader = spec.uploaderConfig;
  // Velero prints the heading whenever the restore has an uploader config, even one that sets nothing.
  if (uploader) {
    d.line();
    d.line('Uploader config:');
    if (uploader?.writeSparseFiles === true) d.line('\tWrite Sparse Files:\ttrue');
    if ((uploader?.parallelFilesDownload ?? 0) > 0) d.line(`\tParallel Restore:\t${uploader?.parallelFilesDownload}`);
  }

  d.line();
  describeOperations(
    d,
    'Restore Item Operations',
    { attempted: status.restoreItemOperationsAttempted ?? 0, completed: status.restoreItemOperationsCompleted ?? 0, failed: status.restoreItemOperationsFailed ?? 0 },
    input.details,
    input.itemOperations,
    formatGoTime,
  );

  if (status.hookStatus) {
    d.line();
    d.line(`HooksAttempted: \t${status.hookStatus.hooksAttempted ?? 0}`);
    d.line(`HooksFailed: \t${status.hookStatus.hooksFailed ?? 0}`);
  }

  if (input.details) {
    d.line();
    describeFetchedResourceList(d, 'restore', input.resourceList);
  }
  return d.toString();
}

/** Volumes whose backup failed or was canceled: each one, with why its data is not back. */
function describeVolumesNotRestored(d: Describer, volumes: readonly RestoreVolumeInfo[], c: Colours): void {
  d.line('Volumes Not Restored:');
  for (const v of volumes) {
    const p = v.pvrInfo;
    const what = p ? `${p.podNamespace}/${p.podName}: volume ${p.volumeName}` : `${v.pvcNamespace ?? ''}/${v.pvcName ?? ''}: persistent volume claim`;
    d.line(`\t${what}:\t${c.red(`not restored: ${v.notRestored ?? ''}`)}`);
  }
}

function describePodVolumeRestores(d: Describer, pvrs: readonly PodVolumeRestore[], details: boolean): void {
  const uploader = pvrs[0]?.spec.uploaderType ?? 'kopia';
  const views = podVolumeRestoreViews(pvrs);
  d.line(details ? `${uploader} Restores:` : `${uploader} Restores (specify --details for more information):`);
  describePhaseGroups(d, views, PVR_PHASE_ORDER, 1, details);
  if (details) {
    d.line();
    d.line('Pod Volume Restore Details:');
    describePodVolumeDetails(d, views, 1);
  }
}

/** Velero's "CSI Snapshot Restores:" section: snapshots restored in place first, then data-moved volumes. */
function describeCsiSnapshotRestores(d: Describer, infos: readonly RestoreVolumeInfo[], details: boolean): void {
  const csi = infos.filter((v) => v.restoreMethod === 'CSISnapshot' && !v.notRestored);
  const ordered = [...csi.filter((v) => !v.snapshotDataMoved), ...csi.filter((v) => v.snapshotDataMoved)];
  if (!ordered.length) {
    d.line('CSI Snapshot Restores: <none included>');
    return;
  }
  d.line('CSI Snapshot Restores:');
  for (const v of ordered) {
    d.line(`\t${v.pvcNamespace ?? ''}/${v.pvcName ?? ''}:`);
    if (!details) {
      d.line(v.snapshotDataMoved ? '\t\tData Movement: specify --details for more information' : '\t\tSnapshot: specify --details for more information');
    } else if (v.snapshotDataMoved) {
      const m = v.snapshotDataMovementInfo;
      d.line('\t\tData Movement:');
      d.line(`\t\t\tOperation ID: ${m?.operationID ?? ''}`);
      d.line(`\t\t\tData Mover: ${m?.dataMover || 'velero'}`);
      d.line(`\t\t\tUploader Type: ${m?.uploaderType || 'kopia'}`);
    } else {
      d.line('\t\tSnapshot:');
      d.line(`\t\t\tSnapshot Content Name: ${v.csiSnapshotInfo?.vscName ?? ''}`);
      d.line(`\t\t\tStorage Snapshot ID: ${v.csiSnapshotInfo?.snapshotHandle ?? ''}`);
      d.line(`\t\t\tCSI Driver: ${v.csiSnapshotInfo?.driver ?? ''}`);
    }
  }
}
