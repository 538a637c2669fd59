/**
 * `schedule create|get|pause|unpause` and `backup create --from-schedule`: building a Schedule from Velero's flags
 * (the backup flags describe its template; each error names its flag), the `schedule get` table, pausing, and the
 * Backup a schedule makes on demand.
 */
import {
  Kinds,
  backupFromSchedule,
  creationTimestampOf,
  newSchedule,
  parseCronSchedule,
  parseSchedule,
  timestampedName,
  type Backup,
  type Schedule,
} from '../api/index.js';
import { customClient, type CustomClient } from '../kube/custom.js';
import type { Kube } from '../kube/client.js';
import { NotFoundError, UsageError } from '../base/errors.js';
import type { Column } from './output.js';
import { buildBackupSpec, checkObjectName, formatGoTime, objectMetaFlags, selectorText, shortHumanDuration, type BackupCreateFlags, type TriState } from './backups.js';
import { durationText } from './describe/describer.js';

export function scheduleClient(kube: Kube): CustomClient<Schedule> {
  return customClient<Schedule>(kube, Kinds.Schedule, parseSchedule);
}

/** The flags of `schedule create`: the backup flags (the template) and the schedule's own. */
export interface ScheduleCreateFlags extends BackupCreateFlags {
  schedule?: string | undefined;
  paused?: boolean | undefined;
  'skip-immediately'?: TriState;
  'use-owner-references-in-backup'?: boolean | undefined;
}

/** Builds the Schedule `schedule create` submits; throws UsageError naming the flag for any bad input. */
export function buildSchedule(flags: ScheduleCreateFlags): Schedule {
  checkObjectName('NAME', 'schedule', flags.name);
  if (!flags.schedule) throw new UsageError('--schedule', 'is required: a cron expression such as "0 1 * * *" or "@every 6h"');
  const cron = parseCronSchedule(flags.schedule);
  if (!cron.ok) throw new UsageError('--schedule', cron.error);
  const { labels, annotations } = objectMetaFlags(flags);
  return newSchedule({
    namespace: flags.namespace,
    name: flags.name,
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
    spec: {
      template: buildBackupSpec(flags),
      schedule: flags.schedule,
      // Velero's CLI always writes these two.
      useOwnerReferencesInBackup: flags['use-owner-references-in-backup'] ?? false,
      paused: flags.paused ?? false,
      ...(flags['skip-immediately'] !== undefined ? { skipImmediately: flags['skip-immediately'] } : {}),
    },
  });
}

/** When a time is, from now: `5m` ahead, `2h ago`, `n/a` when unset (Velero's humanReadableTimeFromNow). */
export function timeFromNow(value: string | null | undefined, now: Date): string {
  const at = value ? new Date(value) : undefined;
  if (!at || Number.isNaN(at.getTime())) return 'n/a';
  const diff = at.getTime() - now.getTime();
  return diff >= 0 ? shortHumanDuration(diff) : `${shortHumanDuration(-diff)} ago`;
}

/** `schedule get`: Velero's columns. */
export function scheduleColumns(now: Date = new Date()): readonly Column<Schedule>[] {
  return [
    { header: 'name', value: (s) => s.metadata.name ?? '' },
    { header: 'status', value: (s) => s.status?.phase || 'New' },
    { header: 'created', value: (s) => formatGoTime(creationTimestampOf(s)) ?? '<nil>' },
    { header: 'schedule', value: (s) => s.spec.schedule },
    { header: 'backup ttl', value: (s) => durationText(s.spec.template.ttl) },
    { header: 'last backup', value: (s) => timeFromNow(s.status?.lastBackup, now) },
    { header: 'selector', value: (s) => selectorText(s.spec.template.labelSelector) },
    { header: 'paused', value: (s) => String(s.spec.paused ?? false) },
  ];
}

/** `backup create --from-schedule`: the Backup the schedule would make now (name `<schedule>-<timestamp>` unless given). */
export async function backupFromScheduleNamed(kube: Kube, opts: { namespace: string; schedule: string; name?: string | undefined; now: Date }): Promise<Backup> {
  const schedule = await scheduleClient(kube).get(opts.namespace, opts.schedule);
  if (!schedule) throw new NotFoundError(`schedule "${opts.schedule}" not found in namespace "${opts.namespace}"`);
  const name = opts.name ?? timestampedName(opts.schedule, opts.now);
  checkObjectName(opts.name ? 'NAME' : '--from-schedule', 'backup', name);
  return backupFromSchedule(schedule, name);
}

/** What `schedule pause|unpause` changes on one schedule, or why it leaves it. */
export type PauseChange = { change: false; message: string } | { change: true; apply: (s: Schedule) => void; message: string };

/** Velero's runPause: a schedule already so is left; else `paused` and `skipImmediately` are set (unset = server default). */
export function pauseChange(schedule: Schedule, paused: boolean, skipImmediately: boolean | undefined): PauseChange {
  const name = schedule.metadata.name ?? '';
  const word = paused ? 'paused' : 'unpaused';
  if ((schedule.spec.paused ?? false) === paused) return { change: false, message: `Schedule ${name} is already ${word}, skip` };
  return {
    change: true,
    message: `Schedule ${name} ${word} successfully`,
    apply: (s) => {
      s.spec.paused = paused;
      if (skipImmediately === undefined) delete s.spec.skipImmediately;
      else s.spec.skipImmediately = skipImmediately;
    },
  };
}
