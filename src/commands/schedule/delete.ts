import { Args } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand } from '../../cli/base-command.js';
import { checkConfirmedSelection, confirmDeletion, confirmFlag, selectionFlags } from '../../cli/selection.js';
import { scheduleClient } from '../../cli/schedules.js';
import { connect } from '../../kube/client.js';

export default class ScheduleDelete extends BaseCommand<typeof ScheduleDelete> {
  static override summary = 'Delete schedules (their backups stay, unless the schedule owns them: --use-owner-references-in-backup).';
  static override description = 'Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> schedule delete nightly --confirm', '<%= config.bin %> schedule delete --selector team=shop --confirm', '<%= config.bin %> schedule delete --all --confirm'];
  static override args = { names: Args.string({ description: 'Names of schedules to delete.' }) };
  static override strict = false;
  static override flags = { ...selectionFlags('Delete', 'schedules'), ...confirmFlag };

  async run(): Promise<void> {
    const names = this.positional;
    checkConfirmedSelection('schedule', names, this.flags);

    const client = scheduleClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const ns = this.flags.namespace;
    const schedules = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'schedule' });
    if (!schedules.length) {
      this.out('No schedules found');
      return;
    }
    if (!(await confirmDeletion('schedule', schedules.map((o) => o.metadata.name ?? ''), this.flags.confirm, (line) => this.out(line)))) return;
    for (const s of schedules) {
      await client.delete(ns, s.metadata.name ?? '');
      this.out(`Schedule deleted: ${s.metadata.name}`);
    }
  }
}
