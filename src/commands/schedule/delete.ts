import { Args, Flags } from '@oclif/core';
import { confirm } from '@inquirer/prompts';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand } from '../../cli/base-command.js';
import { UsageError } from '../../base/errors.js';
import { canPrompt } from '../../cli/progress.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { scheduleClient } from '../../cli/schedules.js';
import { connect } from '../../kube/client.js';

export default class ScheduleDelete extends BaseCommand<typeof ScheduleDelete> {
  static override summary = 'Delete schedules (their backups stay, unless the schedule owns them: --use-owner-references-in-backup).';
  static override description = 'Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> schedule delete nightly --confirm', '<%= config.bin %> schedule delete --selector team=shop --confirm', '<%= config.bin %> schedule delete --all --confirm'];
  static override args = { names: Args.string({ description: 'Names of schedules to delete.' }) };
  static override strict = false;
  static override flags = {
    all: Flags.boolean({ description: 'Delete all schedules.', default: false }),
    selector: Flags.string({ char: 'l', description: 'Delete the schedules whose labels match this selector.' }),
    confirm: Flags.boolean({ description: 'Do not ask for confirmation.', default: false }),
  };

  async run(): Promise<void> {
    const names = this.positional;
    const given = [names.length > 0, this.flags.all, Boolean(this.flags.selector)].filter(Boolean).length;
    if (given === 0) throw new UsageError('NAMES', 'give schedule names, --selector or --all');
    if (given > 1) throw new UsageError('--all', 'use only one of schedule names, --selector and --all');
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    if (!this.flags.confirm && !canPrompt()) throw new UsageError('--confirm', 'required when no terminal is attached');

    const client = scheduleClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const ns = this.flags.namespace;
    const schedules = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'schedule' });
    if (!schedules.length) {
      this.out('No schedules found');
      return;
    }
    if (!this.flags.confirm) {
      const list = schedules.map((s) => s.metadata.name).join(', ');
      const ok = await confirm({ message: `Delete schedule${schedules.length > 1 ? 's' : ''} ${list}? Are you sure you want to continue?`, default: false });
      if (!ok) {
        this.out('Cancelled.');
        return;
      }
    }
    for (const s of schedules) {
      await client.delete(ns, s.metadata.name ?? '');
      this.out(`Schedule deleted: ${s.metadata.name}`);
    }
  }
}
