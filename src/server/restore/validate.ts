/**
 * Validation of a new Restore (docs/restore.md): every problem is collected, so the user sees all
 * of them in `status.validationErrors` at once.
 */
import { BackupPhase, ExistingResourcePolicies, type Backup, type BackupStorageLocation, type Restore } from '../../api/index.js';
import { filterProblems } from './filters.js';
import { namespaceMappingProblems } from './namespace-mapping.js';

export interface ValidateRestoreOptions {
  restore: Restore;
  /** The Backup CR named by spec.backupName, undefined when there is none. */
  backup: Backup | undefined;
  /** The backup's storage location, undefined when it does not exist. */
  location: BackupStorageLocation | undefined;
}

export function restoreSpecProblems(restore: Restore): string[] {
  const problems: string[] = [];
  const { backupName, scheduleName } = restore.spec;
  if (!!backupName === !!scheduleName) problems.push('Either a backup or schedule must be specified as a source for the restore, but not both');
  else if (scheduleName) problems.push('restoring from a schedule (spec.scheduleName) is not supported yet; name the backup in spec.backupName');
  const policy = restore.spec.existingResourcePolicy;
  if (policy && !(ExistingResourcePolicies as readonly string[]).includes(policy)) problems.push(`Invalid ExistingResourcePolicy: ${policy}`);
  problems.push(...filterProblems(restore));
  problems.push(...namespaceMappingProblems(restore.spec.namespaceMapping));
  return problems;
}

export function validateRestore(opts: ValidateRestoreOptions): string[] {
  const problems = restoreSpecProblems(opts.restore);
  const name = opts.restore.spec.backupName;
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
