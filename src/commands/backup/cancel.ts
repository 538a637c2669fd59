import { Args } from '@oclif/core';
import { confirm } from '@inquirer/prompts';
import { BaseCommand } from '../../cli/base-command.js';
import { checkConfirmedSelection, confirmFlag, selectionFlags } from '../../cli/selection.js';
import { backupClient } from '../../cli/backups.js';
import { cancelObjects } from '../../cli/cancel.js';
import { connect } from '../../kube/client.js';

export default class BackupCancel extends BaseCommand<typeof BackupCancel> {
  static override summary = 'Cancel running backups: stop them and delete what they wrote.';
  static override description =
    'Asks the server to cancel each backup (annotation cairn.io/cancel-requested). The server stops the backup, stops its pod volume backups and data uploads, deletes what the backup wrote (its files in storage, its snapshots) and ends it Canceled. Only a backup that is New or still running can be canceled. Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> backup cancel nightly-20260101 --confirm', '<%= config.bin %> backup cancel --all --confirm', '<%= config.bin %> backup cancel -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of backups to cancel.' }) };
  static override strict = false;
  static override flags = { ...selectionFlags('Cancel', 'running backups'), ...confirmFlag };

  async run(): Promise<void> {
    const names = this.positional;
    checkConfirmedSelection('backup', names, this.flags);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    await cancelObjects({
      kind: 'backup',
      client: backupClient(kube),
      namespace: this.flags.namespace,
      names,
      selector: this.flags.selector,
      confirm: this.flags.confirm ? undefined : (message) => confirm({ message, default: false }),
      out: (line) => this.out(line),
    });
  }
}
