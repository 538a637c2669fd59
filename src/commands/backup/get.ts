import { Args } from '@oclif/core';
import type { Backup } from '../../api/index.js';
import { backupClient, backupColumns } from '../../cli/backups.js';
import { GetCommand, getFlags } from '../../cli/get-command.js';
import type { Kube } from '../../kube/client.js';

export default class BackupGet extends GetCommand<Backup> {
  static override summary = 'List backups, or show the named ones.';
  static override examples = ['<%= config.bin %> backup get', '<%= config.bin %> backup get nightly -o yaml', '<%= config.bin %> backup get -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of backups to show (default: all).' }) };
  static override flags = getFlags('backups');
  protected readonly kind = 'backup';

  protected client(kube: Kube) {
    return backupClient(kube);
  }

  protected columns() {
    return backupColumns();
  }
}
