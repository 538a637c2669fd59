/**
 * What the schedule controller does about one Schedule now: a pure function of the Schedule, the Backups it made
 * (label `velero.io/schedule-name`), the problems found with its template, and the time. Velero's rules:
 *   - the cron expression (and here the template) is validated on every pass: Enabled, or FailedValidation with
 *     every reason in `status.validationErrors`; nothing is made while invalid or `spec.paused`;
 *   - `spec.skipImmediately` (unset = the server's `--schedule-skip-immediately`) skips the run that is due right
 *     now: `status.lastSkipped` = now and `spec.skipImmediately` = false, so it is taken once (on creation or on
 *     the first pass after unpausing);
 *   - the next run is the first activation after the latest of `status.lastBackup` (else the creation time) and
 *     `status.lastSkipped`; it is due once the clock reaches it. Missed runs are not caught up: however many
 *     activations passed while the server was down, one backup is made;
 *   - while a backup of the schedule is still running, no other is made; the due run is made once it ends.
 * Restart safety comes from the name: the backup of a run is named after its activation time
 * (`<schedule>-<yyyyMMddHHmmss>`, the latest activation due), so a server that created it and stopped before
 * recording `lastBackup` finds it on the next pass and only records it.
 */
import { BackupRunningPhases, MaxScheduleNameLength, SchedulePhase, creationTimestampOf, parseCronSchedule, timestampedName, type Schedule } from '../../api/index.js';

/** Backup phases in which a backup is still being made (cairn's fs-backup waits in WaitingForPluginOperations). */
const RUNNING: ReadonlySet<string> = new Set(['', ...BackupRunningPhases]);

export interface ScheduleBackupSummary {
  name: string;
  phase: string | undefined;
}

export interface ScheduleDecisionInput {
  schedule: Schedule;
  now: Date;
  /** The server's `--schedule-skip-immediately`, used while `spec.skipImmediately` is unset. */
  skipImmediatelyDefault: boolean;
  /** Problems with the template (and its storage location) found by the caller, with the field they concern. */
  templateProblems: readonly string[];
  /** The Backups labelled with this schedule's name. */
  backups: readonly ScheduleBackupSummary[];
}

export type ScheduleAction =
  | { kind: 'none'; reason: string }
  /** Nothing due before `nextRun`. */
  | { kind: 'wait'; nextRun: Date; ms: number }
  /** A run is due but an earlier backup of the schedule is still running. */
  | { kind: 'blocked'; running: string[]; due: Date }
  /** Create this Backup, then record the run. */
  | { kind: 'create'; backupName: string; slot: Date }
  /** The due run's backup already exists (made before a restart): only record the run. */
  | { kind: 'record'; backupName: string; slot: Date };

export interface ScheduleDecision {
  phase: SchedulePhase;
  validationErrors: string[];
  /** Set when a skip is taken now: write `status.lastSkipped` and `spec.skipImmediately: false`. */
  skippedAt?: Date;
  action: ScheduleAction;
}

/** The schedule's own problems: its name, its cron expression, then the template's. */
export function scheduleProblems(schedule: Schedule, templateProblems: readonly string[]): string[] {
  const problems: string[] = [];
  const name = schedule.metadata.name ?? '';
  if (name.length > MaxScheduleNameLength) problems.push(`metadata.name: a schedule name may have at most ${MaxScheduleNameLength} characters, so that its backups' names (<schedule>-<yyyyMMddHHmmss>) are valid`);
  const cron = parseCronSchedule(schedule.spec?.schedule ?? '');
  if (!cron.ok) problems.push(cron.error);
  problems.push(...templateProblems);
  return problems;
}

function time(text: string | null | undefined): Date | undefined {
  if (!text) return undefined;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export function scheduleDecision(input: ScheduleDecisionInput): ScheduleDecision {
  const { schedule, now } = input;
  const validationErrors = scheduleProblems(schedule, input.templateProblems);
  const cron = parseCronSchedule(schedule.spec?.schedule ?? '');
  if (validationErrors.length || !cron.ok) {
    return { phase: SchedulePhase.FailedValidation, validationErrors, action: { kind: 'none', reason: 'the schedule failed validation' } };
  }
  const enabled = { phase: SchedulePhase.Enabled, validationErrors: [] };
  if (schedule.spec.paused) return { ...enabled, action: { kind: 'none', reason: 'the schedule is paused' } };

  const skip = schedule.spec.skipImmediately ?? input.skipImmediatelyDefault;
  const skippedAt = skip ? now : undefined;
  const lastBackup = time(schedule.status?.lastBackup) ?? creationTimestampOf(schedule) ?? now;
  const lastSkipped = skippedAt ?? time(schedule.status?.lastSkipped);
  const base = lastSkipped && lastSkipped.getTime() > lastBackup.getTime() ? lastSkipped : lastBackup;
  const nextRun = cron.schedule.next(base);
  const withSkip = skippedAt ? { skippedAt } : {};
  if (now.getTime() < nextRun.getTime()) return { ...enabled, ...withSkip, action: { kind: 'wait', nextRun, ms: nextRun.getTime() - now.getTime() } };

  const slot = cron.schedule.latestDue(base, now);
  const backupName = timestampedName(schedule.metadata.name ?? '', slot);
  if (input.backups.some((b) => b.name === backupName)) return { ...enabled, ...withSkip, action: { kind: 'record', backupName, slot } };
  const running = input.backups.filter((b) => RUNNING.has(b.phase ?? '')).map((b) => b.name).sort();
  if (running.length) return { ...enabled, ...withSkip, action: { kind: 'blocked', running, due: slot } };
  return { ...enabled, ...withSkip, action: { kind: 'create', backupName, slot } };
}
