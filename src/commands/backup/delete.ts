import { Args, Flags } from '@oclif/core';
import { confirm } from '@inquirer/prompts';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand } from '../../cli/base-command.js';
import { UsageError } from '../../base/errors.js';
import { canPrompt } from '../../cli/progress.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { backupClient, deleteRequestClient, deleteRequestFor, isRunningBackup } from '../../cli/backups.js';
import { connect } from '../../kube/client.js';

export default class BackupDelete extends BaseCommand<typeof BackupDelete> {
  static override summary = 'Delete backups: their files in storage, their restores and the Backup objects.';
  static override description =
    'Creates one DeleteBackupRequest per backup; the server deletes the files in storage, then the Backup. Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> backup delete nightly --confirm', '<%= config.bin %> backup delete --all --confirm', '<%= config.bin %> backup delete -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of backups to delete.' }) };
  static override strict = false;
  static override flags = {
    all: Flags.boolean({ description: 'Delete all backups.', default: false }),
    selector: Flags.string({ char: 'l', description: 'Delete the backups whose labels match this selector.' }),
    confirm: Flags.boolean({ description: 'Do not ask for confirmation.', default: false }),
  };

  async run(): Promise<void> {
    const names = this.positional;
    const given = [names.length > 0, this.flags.all, Boolean(this.flags.selector)].filter(Boolean).length;
    if (given === 0) throw new UsageError('NAMES', 'give backup names, --selector or --all');
    if (given > 1) throw new UsageError('--all', 'use only one of backup names, --selector and --all');
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    if (!this.flags.confirm && !canPrompt()) throw new UsageError('--confirm', 'required when no terminal is attached');

    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const ns = this.flags.namespace;
    const client = backupClient(kube);
    const backups = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'backup' });
    if (!backups.length) {
      this.out('No backups found');
      return;
    }
    if (!this.flags.confirm) {
      const list = backups.map((b) => b.metadata.name).join(', ');
      const ok = await confirm({ message: `Delete backup${backups.length > 1 ? 's' : ''} ${list}? Are you sure you want to continue?`, default: false });
      if (!ok) {
        this.out('Cancelled.');
        return;
      }
    }
    const requests = deleteRequestClient(kube);
    for (const b of backups) {
      await requests.create(deleteRequestFor(b));
      this.out(`Request to delete backup "${b.metadata.name}" submitted successfully.`);
      if (isRunningBackup(b)) this.out(`The backup is still running: it is canceled first (see \`cairn backup cancel\`), then deleted.`);
      this.out('The backup will be fully deleted after all associated data (disk snapshots, backup files, restores) are removed.');
    }
  }
}
