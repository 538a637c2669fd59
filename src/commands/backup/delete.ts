import { Args } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand } from '../../cli/base-command.js';
import { checkConfirmedSelection, confirmDeletion, confirmFlag, selectionFlags } from '../../cli/selection.js';
import { backupClient, deleteRequestClient, deleteRequestFor, isRunningBackup } from '../../cli/backups.js';
import { connect } from '../../kube/client.js';

export default class BackupDelete extends BaseCommand<typeof BackupDelete> {
  static override summary = 'Delete backups: their files in storage, their restores and the Backup objects.';
  static override description =
    'Creates one DeleteBackupRequest per backup; the server deletes the files in storage, then the Backup. Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> backup delete nightly --confirm', '<%= config.bin %> backup delete --all --confirm', '<%= config.bin %> backup delete -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of backups to delete.' }) };
  static override strict = false;
  static override flags = { ...selectionFlags('Delete', 'backups'), ...confirmFlag };

  async run(): Promise<void> {
    const names = this.positional;
    checkConfirmedSelection('backup', names, this.flags);

    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const ns = this.flags.namespace;
    const client = backupClient(kube);
    const backups = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'backup' });
    if (!backups.length) {
      this.out('No backups found');
      return;
    }
    if (!(await confirmDeletion('backup', backups.map((o) => o.metadata.name ?? ''), this.flags.confirm, (line) => this.out(line)))) return;
    const requests = deleteRequestClient(kube);
    for (const b of backups) {
      await requests.create(deleteRequestFor(b));
      this.out(`Request to delete backup "${b.metadata.name}" submitted successfully.`);
      if (isRunningBackup(b)) this.out(`The backup is still running: it is canceled first (see \`cairn backup cancel\`), then deleted.`);
      this.out('The backup will be fully deleted after all associated data (disk snapshots, backup files, restores) are removed.');
    }
  }
}
