import { Args, Flags } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { asList, formatTable, render } from '../../cli/output.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { scheduleClient, scheduleColumns } from '../../cli/schedules.js';
import { connect } from '../../kube/client.js';

export default class ScheduleGet extends BaseCommand<typeof ScheduleGet> {
  static override summary = 'List schedules, or show the named ones.';
  static override examples = ['<%= config.bin %> schedule get', '<%= config.bin %> schedule get nightly -o yaml', '<%= config.bin %> schedule get -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of schedules to show (default: all).' }) };
  static override strict = false;
  static override flags = {
    ...outputFlag,
    selector: Flags.string({ char: 'l', description: 'Only schedules whose labels match this selector.' }),
  };

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const client = scheduleClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const names = this.positional;
    const items = await selectObjects(client, { namespace: this.flags.namespace, names, selector: this.flags.selector, what: 'schedule' });
    if (this.flags.output === 'table' && !items.length) {
      this.out('No schedules found');
      return;
    }
    const value = names.length === 1 ? items[0] : asList(items);
    this.out(render(this.flags.output, value, () => formatTable(scheduleColumns(), items)));
  }
}
