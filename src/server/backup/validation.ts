/**
 * Validation of a new Backup: every reason is collected (not just the first) so `describe` shows them all, with
 * Velero's wording where Velero has one. Pure: the caller looks up the storage location.
 */
import { isGoDuration, type Backup, type BackupSpec, type BackupStorageLocation } from '../../api/index.js';
import { backupHookSpecProblems } from '../hooks/backup-hooks.js';
import { includesExcludesProblems, labelSelectorProblems, usesOldResourceFilters, usesScopedFilters } from './filters.js';

export interface BackupValidationInput {
  backup: Backup;
  /** The name the backup will be stored under (spec.storageLocation or the default). */
  locationName: string;
  /** The location with that name, or undefined when there is none. */
  location: BackupStorageLocation | undefined;
  /** Whether the spec named the location (the message differs when the default is missing). */
  locationFromSpec: boolean;
}

/** The problems of a backup spec on its own (no storage location): also what a Schedule's template is checked for. */
export function backupSpecProblems(spec: BackupSpec): string[] {
  const errors: string[] = [];
  for (const p of includesExcludesProblems(spec.includedResources, spec.excludedResources)) errors.push(`Invalid included/excluded resource lists: ${p}`);
  for (const p of includesExcludesProblems(spec.includedNamespaces, spec.excludedNamespaces)) errors.push(`Invalid included/excluded namespace lists: ${p}`);
  for (const p of includesExcludesProblems(spec.includedClusterScopedResources, spec.excludedClusterScopedResources)) {
    errors.push(`Invalid cluster-scoped included/excluded resource lists: ${p}`);
  }
  for (const p of includesExcludesProblems(spec.includedNamespaceScopedResources, spec.excludedNamespaceScopedResources)) {
    errors.push(`Invalid namespace-scoped included/excluded resource lists: ${p}`);
  }
  if (usesScopedFilters(spec) && usesOldResourceFilters(spec)) {
    errors.push(
      'include-resources, exclude-resources and include-cluster-resources are old filter parameters; include-cluster-scoped-resources, exclude-cluster-scoped-resources, include-namespace-scoped-resources and exclude-namespace-scoped-resources are new filter parameters. They cannot be used together',
    );
  }

  if (spec.labelSelector && (spec.orLabelSelectors?.length ?? 0) > 0) {
    errors.push('encountered labelSelector as well as orLabelSelectors in backup spec, only one can be specified');
  }
  if (spec.labelSelector) for (const p of labelSelectorProblems(spec.labelSelector)) errors.push(`Invalid label selector: ${p}`);
  for (const [i, sel] of (spec.orLabelSelectors ?? []).entries()) {
    for (const p of labelSelectorProblems(sel)) errors.push(`Invalid orLabelSelectors[${i}]: ${p}`);
  }

  for (const [field, value] of [
    ['ttl', spec.ttl],
    ['csiSnapshotTimeout', spec.csiSnapshotTimeout],
    ['itemOperationTimeout', spec.itemOperationTimeout],
  ] as const) {
    if (value !== undefined && value !== '' && !isGoDuration(value)) errors.push(`invalid ${field} "${value}": not a duration such as 720h0m0s`);
  }
  errors.push(...backupHookSpecProblems(spec));
  errors.push(...unsupportedBackupFields(spec));
  return errors;
}

/**
 * Spec fields cairn does not act on yet: refused, so a backup is never made without what its author asked for
 * (docs/differences-from-velero.md lists them).
 */
export function unsupportedBackupFields(spec: BackupSpec): string[] {
  const problems: string[] = [];
  if (spec.resourcePolicy) {
    problems.push(`spec.resourcePolicy: resource policies (${spec.resourcePolicy.kind} "${spec.resourcePolicy.name}") are not supported by cairn yet; remove the field to back up without them`);
  }
  if (spec.orderedResources && Object.keys(spec.orderedResources).length > 0) {
    problems.push(`spec.orderedResources: backing up resources in a given order is not supported by cairn yet (${Object.keys(spec.orderedResources).join(', ')}); remove the field to back up in the default order`);
  }
  return problems;
}

/** Spec fields cairn does not act on that still allow a useful backup: each becomes a warning in the results. */
export function backupFieldWarnings(spec: BackupSpec): string[] {
  const warnings: string[] = [];
  if (spec.volumeSnapshotLocations?.length) {
    warnings.push(`spec.volumeSnapshotLocations (${spec.volumeSnapshotLocations.join(', ')}) is not acted on: cairn has no volume snapshotter plugins, so no native volume snapshots are taken`);
  }
  if (spec.volumeGroupSnapshotLabelKey) {
    warnings.push(`spec.volumeGroupSnapshotLabelKey (${spec.volumeGroupSnapshotLabelKey}) is not acted on: cairn snapshots each claim on its own, never as a VolumeGroupSnapshot`);
  }
  return warnings;
}

export function backupValidationErrors(input: BackupValidationInput): string[] {
  const { backup, location, locationName } = input;
  const errors = backupSpecProblems(backup.spec ?? {});

  if (!location) {
    errors.push(
      input.locationFromSpec
        ? `error getting backup storage location: backupstoragelocations.velero.io "${locationName}" not found`
        : `an existing backup storage location wasn't specified at backup creation time and the default '${locationName}' wasn't found. Please address this issue (see \`cairn backup-location -h\` for options) and create a new backup. Error: backupstoragelocations.velero.io "${locationName}" not found`,
    );
  } else {
    if (location.spec.accessMode === 'ReadOnly') {
      errors.push(`backup can't be created because backup storage location ${locationName} is currently in read-only mode`);
    }
    if (location.status?.phase === 'Unavailable') {
      errors.push(`backup can't be created because BackupStorageLocation ${locationName} is in Unavailable status.${location.status.message ? ` ${location.status.message}` : ''}`);
    }
  }
  return errors;
}
