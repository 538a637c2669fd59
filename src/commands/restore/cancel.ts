import { Args, Flags } from '@oclif/core';
import { confirm } from '@inquirer/prompts';
import { BaseCommand } from '../../cli/base-command.js';
import { UsageError } from '../../base/errors.js';
import { canPrompt } from '../../cli/progress.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { restoreClient } from '../../cli/restores.js';
import { cancelObjects } from '../../cli/cancel.js';
import { connect } from '../../kube/client.js';

export default class RestoreCancel extends BaseCommand<typeof RestoreCancel> {
  static override summary = 'Cancel running restores: stop restoring items and volume data.';
  static override description =
    'Asks the server to cancel each restore (annotation cairn.io/cancel-requested). The server stops restoring items, stops its pod volume restores and data downloads and ends it Canceled; what was restored so far stays. Only a restore that is New or still running can be canceled. Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> restore cancel shop-restore --confirm', '<%= config.bin %> restore cancel --all --confirm', '<%= config.bin %> restore cancel -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of restores to cancel.' }) };
  static override strict = false;
  static override flags = {
    all: Flags.boolean({ description: 'Cancel all running restores.', default: false }),
    selector: Flags.string({ char: 'l', description: 'Cancel the running restores whose labels match this selector.' }),
    confirm: Flags.boolean({ description: 'Do not ask for confirmation.', default: false }),
  };

  async run(): Promise<void> {
    const names = this.positional;
    const given = [names.length > 0, this.flags.all, Boolean(this.flags.selector)].filter(Boolean).length;
    if (given === 0) throw new UsageError('NAMES', 'give restore names, --selector or --all');
    if (given > 1) throw new UsageError('--all', 'use only one of restore names, --selector and --all');
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    if (!this.flags.confirm && !canPrompt()) throw new UsageError('--confirm', 'required when no terminal is attached');
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    await cancelObjects({
      kind: 'restore',
      client: restoreClient(kube),
      namespace: this.flags.namespace,
      names,
      selector: this.flags.selector,
      confirm: this.flags.confirm ? undefined : (message) => confirm({ message, default: false }),
      out: (line) => this.out(line),
    });
  }
}
