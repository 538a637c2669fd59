/**
 * Validation of a new Restore (docs/restore.md): every problem is collected, so the user sees all
 * of them in `status.validationErrors` at once.
 */
import { BackupPhase, ExistingResourcePolicies, type Backup, type BackupStorageLocation, type Restore } from '../../api/index.js';
import { filterProblems } from './filters.js';
import { namespaceMappingProblems } from './namespace-mapping.js';

export interface ValidateRestoreOptions {
  restore: Restore;
  /** The Backup CR restored from (spec.backupName, or the one chosen for spec.scheduleName), undefined when there is none. */
  backup: Backup | undefined;
  /** The name of that backup when it was chosen for spec.scheduleName. */
  backupName?: string;
  /** The backup's storage location, undefined when it does not exist. */
  location: BackupStorageLocation | undefined;
}

export function restoreSpecProblems(restore: Restore): string[] {
  const problems: string[] = [];
  const { backupName, scheduleName } = restore.spec;
  if (!!backupName === !!scheduleName) problems.push('Either a backup or schedule must be specified as a source for the restore, but not both');
  const policy = restore.spec.existingResourcePolicy;
  if (policy && !(ExistingResourcePolicies as readonly string[]).includes(policy)) problems.push(`Invalid ExistingResourcePolicy: ${policy}`);
  problems.push(...filterProblems(restore));
  problems.push(...namespaceMappingProblems(restore.spec.namespaceMapping));
  return problems;
}

/**
 * The backup a restore with `spec.scheduleName` restores: the schedule's Completed backup that started last
 * (Velero's rule; PartiallyFailed ones are passed over). `backups` are those labelled with the schedule's name.
 */
export function backupOfSchedule(backups: readonly Backup[]): { backupName: string } | { problem: string } {
  if (!backups.length) return { problem: 'No backups found for schedule' };
  const started = (b: Backup) => Date.parse(b.status?.startTimestamp ?? '') || 0;
  const latest = [...backups].filter((b) => b.status?.phase === BackupPhase.Completed).sort((a, b) => started(b) - started(a))[0];
  return latest ? { backupName: latest.metadata.name ?? '' } : { problem: 'No completed backups found for schedule' };
}

export function validateRestore(opts: ValidateRestoreOptions): string[] {
  const problems = restoreSpecProblems(opts.restore);
  const name = opts.restore.spec.backupName || opts.backupName;
  if (!name) return problems;
  const { backup } = opts;
  if (!backup) {
    problems.push(`backup "${name}" does not exist`);
    return problems;
  }
  const phase = backup.status?.phase;
  if (phase !== BackupPhase.Completed && phase !== BackupPhase.PartiallyFailed) {
    problems.push(`backup "${name}" is in phase ${phase ?? 'New'}; only Completed or PartiallyFailed backups can be restored`);
  }
  const locName = backup.spec.storageLocation;
  if (!opts.location) {
    problems.push(`the storage location "${locName ?? ''}" of backup "${name}" does not exist`);
  } else if (opts.location.status?.phase === 'Unavailable') {
    problems.push(`The BSL ${opts.location.metadata.name} is unavailable, cannot retrieve the backup`);
  }
  return problems;
}
