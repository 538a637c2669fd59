import { Args, Flags } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { asList, formatJson, formatYaml } from '../../cli/output.js';
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
  static override flags = {
    ...outputFlag,
    selector: Flags.string({ char: 'l', description: 'Only schedules whose labels match this selector.' }),
    'no-color': Flags.boolean({ description: 'Never colour the output (also: NO_COLOR).', default: false }),
  };

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const client = scheduleClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const names = this.positional;
    const schedules = await selectObjects(client, { namespace: this.flags.namespace, names, selector: this.flags.selector, what: 'schedule' });
    if (this.flags.output !== 'table') {
      const value = names.length === 1 ? schedules[0] : asList(schedules);
      this.out(this.flags.output === 'json' ? formatJson(value) : formatYaml(value));
      return;
    }
    if (!schedules.length) {
      this.out('No schedules found');
      return;
    }
    const c = colours(this.colourEnabled(this.flags['no-color']));
    this.out(schedules.map((s) => describeSchedule(s, c)).join('\n\n'));
  }
}
