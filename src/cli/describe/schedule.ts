/**
 * `schedule describe` text as Velero writes it: metadata, phase, resource policies and uploader config of the
 * template, validation errors, paused, the cron expression and the backup template (the backup spec, indented),
 * then the last backup (and, cairn's addition, when the run was last skipped).
 */
import type { Schedule } from '../../api/index.js';
import { formatGoTime } from '../backups.js';
import type { Colours } from '../colour.js';
import { describeBackupSpec, describePolicyAndUploader } from './backup.js';
import { Describer, describeMetadata, describeValidationErrors } from './describer.js';

export function describeSchedule(schedule: Schedule, c: Colours): string {
  const d = new Describer();
  const status = schedule.status ?? {};
  describeMetadata(d, schedule.metadata, c);

  d.line();
  const phase = status.phase || 'New';
  d.line(`Phase:\t${phase === 'Enabled' ? c.green(phase) : c.phase(phase)}`);

  const template = schedule.spec.template;
  describePolicyAndUploader(d, template);
  describeValidationErrors(d, status.validationErrors, c);

  d.line();
  d.line(`Paused:\t${schedule.spec.paused ?? false}`);

  d.line();
  d.line(`Schedule:\t${schedule.spec.schedule}`);
  d.line();
  d.line('Backup Template:');
  d.prefix = '\t';
  describeBackupSpec(d, template);
  d.prefix = '';

  d.line();
  d.line(`Last Backup:\t${formatGoTime(status.lastBackup) ?? '<never>'}`);
  if (status.lastSkipped) d.line(`Last Skipped:\t${formatGoTime(status.lastSkipped) ?? ''}`);
  return d.toString();
}
