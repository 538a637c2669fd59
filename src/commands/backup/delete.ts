import { Args } from '@oclif/core';
import type { Backup } from '../../api/index.js';
import { backupClient, deleteRequestClient, deleteRequestFor, isRunningBackup } from '../../cli/backups.js';
import { DeleteCommand } from '../../cli/delete-command.js';
import { confirmFlag, selectionFlags } from '../../cli/selection.js';
import type { Kube } from '../../kube/client.js';

export default class BackupDelete extends DeleteCommand<Backup> {
  static override summary = 'Delete backups: their files in storage, their restores and the Backup objects.';
  static override description =
    'Creates one DeleteBackupRequest per backup; the server deletes the files in storage, then the Backup. Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> backup delete nightly --confirm', '<%= config.bin %> backup delete --all --confirm', '<%= config.bin %> backup delete -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of backups to delete.' }) };
  static override flags = { ...selectionFlags('Delete', 'backups'), ...confirmFlag };
  protected readonly kind = 'backup';

  protected client(kube: Kube) {
    return backupClient(kube);
  }

  /** A DeleteBackupRequest: the server deletes the files in storage, then the Backup. */
  protected async deleteOne(b: Backup, ctx: { kube: Kube }): Promise<void> {
    await deleteRequestClient(ctx.kube).create(deleteRequestFor(b));
    this.out(`Request to delete backup "${b.metadata.name}" submitted successfully.`);
    if (isRunningBackup(b)) this.out(`The backup is still running: it is canceled first (see \`cairn backup cancel\`), then deleted.`);
    this.out('The backup will be fully deleted after all associated data (disk snapshots, backup files, restores) are removed.');
  }
}
