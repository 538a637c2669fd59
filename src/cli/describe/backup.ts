/**
 * `backup describe` text in Velero's section order (docs/cli.md). Pure: every file and object it shows
 * is fetched by the caller and passed in, so the output can be checked section by section against fixtures.
 */
import { creationTimestampOf, type Backup, type BackupOperation, type DataUpload, type DeleteBackupRequest, type PodVolumeBackup } from '../../api/index.js';
import type { BackupVolumeInfo } from '../../api/volume-info.js';
import { formatGoTime, selectorText, valueOr, type BackupDescription } from '../backups.js';
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
import { csiSnapshotViews, describeCsiSnapshots } from './data-movement-backup.js';
import { PVB_PHASE_ORDER, describePhaseGroups, describePodVolumeDetails, podVolumeBackupViews, volumeInfoViews } from './pod-volumes.js';

/** The files are the backup's `<n>-results.gz`, `<n>-volumeinfo.json.gz`, `<n>-resource-list.json.gz` and `<n>-itemoperations.json.gz`. */
export interface BackupDescribeInput extends DescribeFilesInput<BackupVolumeInfo, BackupOperation> {
  backup: Backup;
  podVolumeBackups: readonly PodVolumeBackup[];
  /** DataUploads of the backup in the cluster (by backup-uid label), for live data-movement details. */
  dataUploads?: readonly DataUpload[];
  deleteRequests: readonly DeleteBackupRequest[];
}

/** The `-o json|yaml` shape of `backup describe` (documented in docs/cli.md): the same inputs as the text. */
export function backupDescription(input: Omit<BackupDescribeInput, 'colours' | 'cli'>): BackupDescription {
  return {
    apiVersion: 'cairn.io/v1',
    kind: 'BackupDescription',
    backup: input.backup,
    results: valueOr(input.results),
    podVolumeBackups: [...input.podVolumeBackups],
    ...(input.dataUploads?.length ? { dataUploads: [...input.dataUploads] } : {}),
    deleteBackupRequests: [...input.deleteRequests],
    ...(input.details ? { details: { resourceList: valueOr(input.resourceList), volumeInfo: valueOr(input.volumeInfo) } } : {}),
  };
}

export function describeBackup(input: BackupDescribeInput): string {
  const { backup, colours: c } = input;
  const cli = input.cli ?? 'cairn';
  const name = backup.metadata.name ?? '';
  const status = backup.status ?? {};
  const d = new Describer();

  describeMetadata(d, backup.metadata, c);

  d.line();
  const phase = status.phase ?? 'New';
  const logsNote = phase === 'Failed' || phase === 'PartiallyFailed' ? ` (run \`${cli} backup logs ${name}\` for more information)` : '';
  d.line(`Phase:\t${c.phase(phase)}${logsNote}`);

  describePolicyAndUploader(d, backup.spec);
  describeValidationErrors(d, status.validationErrors, c);

  d.line();
  describeResults(d, { warnings: status.warnings ?? 0, errors: status.errors ?? 0 }, input.results, true);

  d.line();
  describeBackupSpec(d, backup.spec);

  d.line();
  describeStatus(d, input);

  if (input.deleteRequests.length) {
    d.line();
    describeDeleteRequests(d, input.deleteRequests);
  }
  return d.toString();
}

/** The resource policy and uploader config of a backup spec, each after a blank line when set (also a schedule's template). */
export function describePolicyAndUploader(d: Describer, spec: Backup['spec']): void {
  if (spec.resourcePolicy) {
    d.line();
    d.line('Resource policies:');
    d.line(`\tType:\t${spec.resourcePolicy.kind}`);
    d.line(`\tName:\t${spec.resourcePolicy.name}`);
  }
  const parallel = spec.uploaderConfig?.parallelFilesUpload ?? 0;
  if (parallel > 0) {
    d.line();
    d.line('Uploader config:');
    d.line(`\tParallel files upload:\t${parallel}`);
  }
}

/**
 * Velero's rule (UseOldResourceFilters): the old form (Included/Excluded/Cluster-scoped) only when
 * includeClusterResources is set or includedResources/excludedResources is non-empty; otherwise the scoped form,
 * also when no filter is set at all.
 */
export function usesOldResourceFilters(spec: Backup['spec']): boolean {
  return (spec.includeClusterResources !== undefined && spec.includeClusterResources !== null) || !!spec.includedResources?.length || !!spec.excludedResources?.length;
}

/** The spec part of `backup describe`, also a schedule's "Backup Template" (Velero's DescribeBackupSpec). */
export function describeBackupSpec(d: Describer, spec: Backup['spec']): void {
  d.line('Namespaces:');
  d.line(`\tIncluded:\t${listOr(spec.includedNamespaces, '*')}`);
  d.line(`\tExcluded:\t${listOr(spec.excludedNamespaces, NONE)}`);

  d.line();
  d.line('Resources:');
  if (usesOldResourceFilters(spec)) {
    d.line(`\tIncluded:\t${listOr(spec.includedResources, '*')}`);
    d.line(`\tExcluded:\t${listOr(spec.excludedResources, NONE)}`);
    d.line(`\tCluster-scoped:\t${boolText(spec.includeClusterResources, 'excluded', 'included', 'auto')}`);
  } else {
    d.line(`\tIncluded cluster-scoped:\t${listOr(spec.includedClusterScopedResources, NONE)}`);
    d.line(`\tExcluded cluster-scoped:\t${listOr(spec.excludedClusterScopedResources, NONE)}`);
    d.line(`\tIncluded namespace-scoped:\t${listOr(spec.includedNamespaceScopedResources, '*')}`);
    d.line(`\tExcluded namespace-scoped:\t${listOr(spec.excludedNamespaceScopedResources, NONE)}`);
  }

  d.line();
  describeLabelSelectors(d, spec);

  d.line();
  d.line(`Storage Location:\t${spec.storageLocation ?? ''}`);

  d.line();
  d.line(`Velero-Native Snapshot PVs:\t${boolText(spec.snapshotVolumes, 'false', 'true', 'auto')}`);
  if (spec.defaultVolumesToFsBackup !== undefined && spec.defaultVolumesToFsBackup !== null) {
    d.line(`File System Backup (Default):\t${boolText(spec.defaultVolumesToFsBackup, 'false', 'true', '')}`);
  }
  d.line(`Snapshot Move Data:\t${boolText(spec.snapshotMoveData, 'false', 'true', 'auto')}`);
  d.line(`Data Mover:\t${spec.datamover || 'velero'}`);

  d.line();
  d.line(`TTL:\t${durationText(spec.ttl)}`);

  d.line();
  d.line(`CSISnapshotTimeout:\t${durationText(spec.csiSnapshotTimeout)}`);
  d.line(`ItemOperationTimeout:\t${durationText(spec.itemOperationTimeout)}`);

  d.line();
  const hooks = spec.hooks?.resources ?? [];
  if (!hooks.length) d.line(`Hooks:\t${NONE}`);
  else {
    d.line('Hooks:');
    d.line('\tResources:');
    for (const h of hooks) {
      d.line(`\t\t${h.name}:`);
      d.line('\t\t\tNamespaces:');
      d.line(`\t\t\t\tIncluded:\t${listOr(h.includedNamespaces, '*')}`);
      d.line(`\t\t\t\tExcluded:\t${listOr(h.excludedNamespaces, NONE)}`);
      d.line();
      d.line('\t\t\tResources:');
      d.line(`\t\t\t\tIncluded:\t${listOr(h.includedResources, '*')}`);
      d.line(`\t\t\t\tExcluded:\t${listOr(h.excludedResources, NONE)}`);
      d.line();
      d.line(`\t\t\tLabel selector:\t${selectorText(h.labelSelector)}`);
      for (const [title, list] of [['Pre Exec Hook', h.pre], ['Post Exec Hook', h.post]] as const) {
        for (const hook of list ?? []) {
          d.line();
          d.line(`\t\t\t${title}:`);
          d.line(`\t\t\t\tContainer:\t${hook.exec.container ?? ''}`);
          d.line(`\t\t\t\tCommand:\t${hook.exec.command.join(' ')}`);
          d.line(`\t\t\t\tOn Error:\t${hook.exec.onError ?? ''}`);
          d.line(`\t\t\t\tTimeout:\t${durationText(hook.exec.timeout)}`);
        }
      }
    }
  }
  if (spec.orderedResources) {
    d.line();
    d.line('OrderedResources:');
    for (const k of Object.keys(spec.orderedResources).sort()) d.line(`\t${k}: ${spec.orderedResources[k]}`);
  }
}

function describeStatus(d: Describer, input: BackupDescribeInput): void {
  const { backup } = input;
  const status = backup.status ?? {};
  d.line(`Backup Format Version:\t${status.formatVersion ?? ''}`);

  d.line();
  d.line(`Started:\t${formatGoTime(status.startTimestamp) ?? '<n/a>'}`);
  d.line(`Completed:\t${formatGoTime(status.completionTimestamp) ?? '<n/a>'}`);

  d.line();
  d.line(`Expiration:\t${formatGoTime(status.expiration) ?? '<nil>'}`);
  d.line();

  if (status.progress) {
    if (status.phase === 'InProgress') {
      d.line(`Estimated total items to be backed up:\t${status.progress.totalItems ?? 0}`);
      d.line(`Items backed up so far:\t${status.progress.itemsBackedUp ?? 0}`);
    } else {
      d.line(`Total items to be backed up:\t${status.progress.totalItems ?? 0}`);
      d.line(`Items backed up:\t${status.progress.itemsBackedUp ?? 0}`);
    }
    d.line();
  }

  describeOperations(
    d,
    'Backup Item Operations',
    { attempted: status.backupItemOperationsAttempted ?? 0, completed: status.backupItemOperationsCompleted ?? 0, failed: status.backupItemOperationsFailed ?? 0 },
    input.details,
    input.itemOperations,
    formatGoTime,
  );

  if (input.details) {
    describeFetchedResourceList(d, 'backup', input.resourceList);
    d.line();
  }

  describeVolumes(d, input);

  if (status.hookStatus) {
    d.line();
    d.line(`HooksAttempted:\t${status.hookStatus.hooksAttempted ?? 0}`);
    d.line(`HooksFailed:\t${status.hookStatus.hooksFailed ?? 0}`);
  }
}

function describeVolumes(d: Describer, input: BackupDescribeInput): void {
  const { details } = input;
  // Velero prints the three sub-sections whatever the backup asked for (snapshotVolumes=false included).
  d.line('Backup Volumes:');
  const info = input.volumeInfo;
  let legacy = false;
  let infos: BackupVolumeInfo[] = [];
  if (!info || (!info.ok && info.notFound)) legacy = true;
  else if (!info.ok) {
    d.line(`\t<error getting backup volume info: ${info.error}>`);
    return;
  } else infos = info.value ?? [];

  const native = infos.filter((v) => v.backupMethod === 'NativeSnapshot');
  if (!native.length) d.line('\tVelero-Native Snapshots: <none included>');
  else {
    d.line('\tVelero-Native Snapshots:');
    for (const v of native) {
      if (!details) d.line(`\t\t${v.pvName ?? ''}: specify --details for more information`);
      else {
        d.line(`\t\t${v.pvName ?? ''}:`);
        d.line(`\t\t\tSnapshot ID:\t${v.nativeSnapshotInfo?.snapshotHandle ?? ''}`);
        d.line(`\t\t\tType:\t${v.nativeSnapshotInfo?.volumeType ?? ''}`);
        d.line(`\t\t\tAvailability Zone:\t${v.nativeSnapshotInfo?.volumeAZ ?? ''}`);
        d.line(`\t\t\tIOPS:\t${v.nativeSnapshotInfo?.iops ?? ''}`);
        d.line(`\t\t\tResult:\t${v.result ?? ''}`);
      }
    }
  }
  d.line();

  describeCsiSnapshots(d, csiSnapshotViews(infos, input.dataUploads ?? []), details, legacy);
  d.line();

  // Live PVBs first (Velero reads them from the cluster); the stored volume info when the cluster has none.
  const views = input.podVolumeBackups.length ? podVolumeBackupViews(input.podVolumeBackups) : volumeInfoViews(infos);
  if (!views.length) {
    d.line('\tPod Volume Backups: <none included>');
  } else {
    const uploader = (input.podVolumeBackups.length ? input.podVolumeBackups[0]?.spec.uploaderType : views[0]?.uploaderType) ?? 'kopia';
    d.line(details ? `\tPod Volume Backups - ${uploader}:` : `\tPod Volume Backups - ${uploader} (specify --details for more information):`);
    describePhaseGroups(d, views, PVB_PHASE_ORDER, 2, details);
    if (details) {
      d.line();
      d.line('\tPod Volume Backup Details:');
      describePodVolumeDetails(d, views, 2);
    }
  }
  describeSkippedVolumes(d, infos, details);
}

/**
 * cairn's addition: the volumes whose data no method took, with the volume info's reason (which names the volume
 * policy that matched, when one did). Velero keeps these reasons in the volume info only.
 */
function describeSkippedVolumes(d: Describer, infos: readonly BackupVolumeInfo[], details: boolean): void {
  const skipped = infos.filter((v) => v.skipped);
  if (!skipped.length) return;
  d.line();
  if (!details) {
    d.line(`\tSkipped Volumes: ${skipped.length} (specify --details for the reasons)`);
    return;
  }
  d.line('\tSkipped Volumes:');
  for (const v of skipped) {
    const claim = v.pvcName ? `${v.pvcNamespace ? `${v.pvcNamespace}/` : ''}${v.pvcName}` : '';
    d.line(`\t\t${claim || v.pvName || ''}${claim && v.pvName ? ` (${v.pvName})` : ''}: ${v.skippedReason ?? ''}`);
  }
}

function describeDeleteRequests(d: Describer, requests: readonly DeleteBackupRequest[]): void {
  const failed = requests.filter((r) => r.status?.phase === 'Processed' && r.status.errors?.length).length;
  d.line(`Deletion Attempts${failed > 0 ? ` (${failed} failed)` : ''}:`);
  requests.forEach((r, i) => {
    if (i > 0) d.line();
    d.line(`\t${formatGoTime(creationTimestampOf(r)) ?? ''}: ${r.status?.phase ?? ''}`);
    if (r.status?.errors?.length) {
      d.line('\tErrors:');
      for (const e of r.status.errors) d.line(`\t\t${e}`);
    }
  });
}
