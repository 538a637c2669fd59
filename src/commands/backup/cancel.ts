import { Args } from '@oclif/core';
import { selectionFlags, confirmFlag } from '../../cli/selection.js';
import { backupClient } from '../../cli/backups.js';
import { CancelCommand } from '../../cli/cancel.js';
import type { Kube } from '../../kube/client.js';

export default class BackupCancel extends CancelCommand {
  static override summary = 'Cancel running backups: stop them and delete what they wrote.';
  static override description =
    'Asks the server to cancel each backup (annotation cairn.io/cancel-requested). The server stops the backup, stops its pod volume backups and data uploads, deletes what the backup wrote (its files in storage, its snapshots) and ends it Canceled. Only a backup that is New or still running can be canceled. Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> backup cancel nightly-20260101 --confirm', '<%= config.bin %> backup cancel --all --confirm', '<%= config.bin %> backup cancel -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of backups to cancel.' }) };
  static override flags = { ...selectionFlags('Cancel', 'running backups'), ...confirmFlag };
  protected readonly kind = 'backup';
  protected client(kube: Kube) {
    return backupClient(kube);
  }
}
