import type { Backup } from '../../api/index.js';
import { backupClient, deleteRequestClient, deleteRequestFor, isRunningBackup } from '../../cli/backups.js';
import { defineDeleteCommand } from '../../cli/delete-command.js';

export default defineDeleteCommand<Backup>({
  kind: 'backup',
  summary: 'Delete backups: their files in storage, their restores and the Backup objects.',
  description:
    'Creates one DeleteBackupRequest per backup; the server deletes the files in storage, then the Backup. Without --confirm it asks first, which needs a terminal.',
  examples: ['<%= config.bin %> backup delete nightly --confirm', '<%= config.bin %> backup delete --all --confirm', '<%= config.bin %> backup delete -l team=shop'],
  client: backupClient,
  /** A DeleteBackupRequest: the server deletes the files in storage, then the Backup. */
  async deleteOne(b, { kube, out }) {
    await deleteRequestClient(kube).create(deleteRequestFor(b));
    out(`Request to delete backup "${b.metadata.name}" submitted successfully.`);
    if (isRunningBackup(b)) out(`The backup is still running: it is canceled first (see \`cairn backup cancel\`), then deleted.`);
    out('The backup will be fully deleted after all associated data (disk snapshots, backup files, restores) are removed.');
  },
});
