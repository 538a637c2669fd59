/**
 * `schedule describe` text as Velero writes it: metadata, phase, resource policies and uploader config of the
 * template, validation errors, paused, the cron expression and the backup template (the backup spec, indented),
 * then the last backup (and, cairn's addition, when the run was last skipped).
 */
import type { Schedule } from '../../api/index.js';
import { formatGoTime } from '../backups.js';
import type { Colours } from '../colour.js';
import { describeBackupSpec } from './backup.js';
import { Describer } from './describer.js';

export function describeSchedule(schedule: Schedule, c: Colours): string {
  const d = new Describer();
  const status = schedule.status ?? {};
  d.line(`Name:\t${c.bold(schedule.metadata.name ?? '')}`);
  d.line(`Namespace:\t${schedule.metadata.namespace ?? ''}`);
  d.map('Labels', schedule.metadata.labels);
  d.map('Annotations', schedule.metadata.annotations);

  d.line();
  const phase = status.phase || 'New';
  d.line(`Phase:\t${phase === 'Enabled' ? c.green(phase) : c.phase(phase)}`);

  const template = schedule.spec.template;
  if (template.resourcePolicy) {
    d.line();
    d.line('Resource policies:');
    d.line(`\tType:\t${template.resourcePolicy.kind}`);
    d.line(`\tName:\t${template.resourcePolicy.name}`);
  }
  const parallel = template.uploaderConfig?.parallelFilesUpload ?? 0;
  if (parallel > 0) {
    d.line();
    d.line('Uploader config:');
    d.line(`\tParallel files upload:\t${parallel}`);
  }
  if (status.validationErrors?.length) {
    d.line();
    // Velero prints the first error on the heading's line and aligns the rest under it.
    status.validationErrors.forEach((e, i) => d.line(`${i === 0 ? 'Validation errors:' : ''}\t${c.red(e)}`));
  }

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
