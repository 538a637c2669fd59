import { Args } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand } from '../../cli/base-command.js';
import { describeFlags, renderDescriptions } from '../../cli/describe/command.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { colours } from '../../cli/colour.js';
import { describeSchedule } from '../../cli/describe/schedule.js';
import { scheduleClient } from '../../cli/schedules.js';
import { connect } from '../../kube/client.js';

export default class ScheduleDescribe extends BaseCommand<typeof ScheduleDescribe> {
  static override summary = 'Describe schedules in detail.';
  static override description = 'Prints what Velero prints: phase, validation errors, paused, the cron expression, the backup template and the last backup.';
  static override examples = ['<%= config.bin %> schedule describe nightly', '<%= config.bin %> schedule describe -l team=shop', '<%= config.bin %> schedule describe nightly -o json'];
  static override args = { names: Args.string({ description: 'Names of schedules to describe (default: all, or those matching --selector).' }) };
  static override strict = false;
  static override flags = describeFlags('schedules');

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const client = scheduleClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const names = this.positional;
    const schedules = await selectObjects(client, { namespace: this.flags.namespace, names, selector: this.flags.selector, what: 'schedule' });
    const c = colours(this.colourEnabled(this.flags['no-color']));
    this.out(await renderDescriptions({ objects: schedules, names, output: this.flags.output, kind: 'schedules', text: (s) => describeSchedule(s, c), data: (s) => s }));
  }
}
