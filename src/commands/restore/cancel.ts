import { Args } from '@oclif/core';
import { confirm } from '@inquirer/prompts';
import { BaseCommand } from '../../cli/base-command.js';
import { checkConfirmedSelection, confirmFlag, selectionFlags } from '../../cli/selection.js';
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
  static override flags = { ...selectionFlags('Cancel', 'running restores'), ...confirmFlag };

  async run(): Promise<void> {
    const names = this.positional;
    checkConfirmedSelection('restore', names, this.flags);
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
