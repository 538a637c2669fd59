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

/**
 * Velero's check of a namespace entry: with each `*` taken as a letter it must be a namespace name (so `*`, `app-*`
 * and `*-prod` are patterns Velero 1.17 accepts, while `?` and `[...]` are not).
 */
export function namespacePatternProblem(ns: string): string | undefined {
  if (ns === '' || ns === '*') return undefined;
  const name = ns.replaceAll('*', 'x');
  if (name.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) return undefined;
  return `invalid namespace "${ns}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`;
}

/** The problems of a backup spec on its own (no storage location): also what a Schedule's template is checked for. */
export function backupSpecProblems(spec: BackupSpec): string[] {
  const errors: string[] = [];
  for (const p of includesExcludesProblems(spec.includedResources, spec.excludedResources)) errors.push(`Invalid included/excluded resource lists: ${p}`);
  for (const p of includesExcludesProblems(spec.includedNamespaces, spec.excludedNamespaces)) errors.push(`Invalid included/excluded namespace lists: ${p}`);
  for (const ns of [...(spec.includedNamespaces ?? []), ...(spec.excludedNamespaces ?? [])]) {
    const problem = namespacePatternProblem(ns);
    if (problem) errors.push(`Invalid included/excluded namespace lists: ${problem}`);
  }
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
  return errors;
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
