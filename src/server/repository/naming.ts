/**
 * Names, labels and decisions of BackupRepositories that need no cluster (docs/repositories.md): which object
 * stands for (location, volume namespace, type), when maintenance is due, how the maintenance history is kept.
 */
import { createHash } from 'node:crypto';
import {
  Labels,
  MaxNameLength,
  formatDuration,
  labelValue,
  parseDuration,
  type BackupRepository,
  type BackupRepositoryMaintenanceStatus,
} from '../../api/index.js';

/** cairn's repositories are all of this type (its own format, laid out where Velero puts kopia's). */
export const KopiaRepositoryType = 'kopia';

/** Velero's kopia maintenance period when the server sets none (`defaultMaintainCheckPeriod`). */
export const DEFAULT_MAINTENANCE_FREQUENCY_MS = 3600_000;

/** Velero keeps this many entries in `status.recentMaintenance` (newest last). */
export const RECENT_MAINTENANCE_KEPT = 3;

export interface RepositoryIdentity {
  /** The BackupStorageLocation name. */
  bsl: string;
  volumeNamespace: string;
  repositoryType?: string;
}

/**
 * Velero's name `<volumeNamespace>-<bsl>-<type>`. Names too long for an object name are cut and end in a hash of the
 * whole, so two long identities never share a name (lookups go by labels anyway).
 */
export function repositoryName(id: RepositoryIdentity): string {
  const name = `${id.volumeNamespace}-${id.bsl}-${id.repositoryType ?? KopiaRepositoryType}`;
  if (name.length <= MaxNameLength) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${name.slice(0, MaxNameLength - 11).replace(/[-.]+$/, '')}-${hash}`;
}

/** The three lookup labels, values in Velero's label-value form. */
export function repositoryLabels(id: RepositoryIdentity): Record<string, string> {
  return {
    [Labels.VolumeNamespace]: labelValue(id.volumeNamespace),
    [Labels.StorageLocation]: labelValue(id.bsl),
    [Labels.RepositoryType]: labelValue(id.repositoryType ?? KopiaRepositoryType),
  };
}

/** The label selector that finds the repository of `id`. */
export function repositorySelector(id: RepositoryIdentity): string {
  return Object.entries(repositoryLabels(id))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** The `spec.maintenanceFrequency` text for a period (Go's Duration.String(), "1h0m0s"). */
export function maintenanceFrequencyText(ms: number = DEFAULT_MAINTENANCE_FREQUENCY_MS): string {
  return formatDuration(ms);
}

/** The repository's maintenance period in ms; an unreadable or non-positive value means the default. */
export function maintenanceFrequencyMs(repo: BackupRepository, fallbackMs: number = DEFAULT_MAINTENANCE_FREQUENCY_MS): number {
  try {
    const ms = parseDuration(repo.spec.maintenanceFrequency);
    return ms > 0 ? ms : fallbackMs;
  } catch {
    return fallbackMs;
  }
}

/**
 * In how many ms maintenance is due (0 = now). A repository that never recorded a maintenance time is due now; the
 * controller records the time it first connected, as Velero does, so a fresh repository is not maintained at once.
 */
export function maintenanceDueInMs(repo: BackupRepository, now: Date, fallbackMs?: number): number {
  const last = repo.status?.lastMaintenanceTime ? Date.parse(repo.status.lastMaintenanceTime) : Number.NaN;
  if (Number.isNaN(last)) return 0;
  return Math.max(0, last + maintenanceFrequencyMs(repo, fallbackMs) - now.getTime());
}

/** The history with `entry` appended, oldest entries dropped beyond RECENT_MAINTENANCE_KEPT. */
export function withMaintenanceEntry(
  history: readonly BackupRepositoryMaintenanceStatus[] | undefined,
  entry: BackupRepositoryMaintenanceStatus,
): BackupRepositoryMaintenanceStatus[] {
  return [...(history ?? []), entry].slice(-RECENT_MAINTENANCE_KEPT);
}

/** The one repository among `found` for an identity; more than one is an error, as in Velero. */
export function pickRepository(found: readonly BackupRepository[], id: RepositoryIdentity): BackupRepository | undefined {
  if (found.length > 1) {
    const names = found.map((r) => r.metadata.name).join(', ');
    throw new Error(`more than one BackupRepository for namespace "${id.volumeNamespace}" in location "${id.bsl}": ${names}`);
  }
  return found[0];
}
