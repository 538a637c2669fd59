import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CairnError, UsageError } from '../../base/errors.js';
import { formatJson, formatYaml } from '../../cli/output.js';
import { BACKUP_TRI_STATE, backupSpecFlags } from '../../cli/backup-flags.js';
import { locationClient } from '../../cli/backup-locations.js';
import { buildSchedule, scheduleClient } from '../../cli/schedules.js';
import { connect } from '../../kube/client.js';
import { isAlreadyExists } from '../../kube/errors.js';

export default class ScheduleCreate extends BaseCommand<typeof ScheduleCreate> {
  static override summary = 'Create a schedule: backups made from a template on a cron schedule.';
  static override description = `--schedule is a cron expression in UTC (minute hour day-of-month month day-of-week), a descriptor (@hourly, @daily, @weekly, @monthly, @yearly) or "@every <duration>" (e.g. "@every 2h30m"). A "CRON_TZ=<zone> " prefix evaluates it in that time zone. The backup flags describe the backups the schedule makes; their TTL is the template's --ttl.`;
  static override examples = [
    '<%= config.bin %> schedule create nightly --schedule "0 1 * * *" --include-namespaces shop --ttl 168h',
    '<%= config.bin %> schedule create every-6h --schedule "@every 6h"',
    '<%= config.bin %> schedule create tokyo --schedule "CRON_TZ=Asia/Tokyo 0 3 * * *" --paused',
  ];
  static override args = { name: Args.string({ required: true, description: 'Name of the schedule.' }) };
  static override flags = {
    schedule: Flags.string({ description: 'When to back up: a cron expression or @every <duration> (required).' }),
    paused: Flags.boolean({ description: 'Create the schedule paused (no backups until `schedule unpause`).', default: false }),
    'skip-immediately': Flags.boolean({ allowNo: true, description: 'Skip the backup due right away when the schedule is created or unpaused (unset: the server default).' }),
    'use-owner-references-in-backup': Flags.boolean({ description: 'Make the schedule the owner of its Backup objects: deleting the schedule deletes them too.', default: false }),
    ...backupSpecFlags,
    output: Flags.option({ char: 'o', options: ['json', 'yaml'] as const, description: 'Print the Schedule instead of submitting it.' })(),
  };

  protected override readonly triStateFlags = [...BACKUP_TRI_STATE, 'skip-immediately'];

  async run(): Promise<void> {
    const namespace = this.flags.namespace;
    const schedule = buildSchedule({ ...this.flags, name: this.args.name, namespace });
    if (this.flags.output) {
      this.out(this.flags.output === 'json' ? formatJson(schedule) : formatYaml(schedule));
      return;
    }
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const location = this.flags['storage-location'];
    if (location && !(await locationClient(kube).get(namespace, location))) {
      throw new UsageError('--storage-location', `backup storage location "${location}" not found in namespace "${namespace}"`);
    }
    try {
      await scheduleClient(kube).create(schedule);
    } catch (err) {
      if (isAlreadyExists((err as CairnError).cause)) throw new UsageError('NAME', `schedule "${this.args.name}" already exists in namespace "${namespace}"`);
      throw err;
    }
    this.out(`Schedule "${this.args.name}" created successfully.`);
  }
}
