import type { Backup } from '../../api/index.js';
import { backupClient, backupColumns } from '../../cli/backups.js';
import { defineGetCommand } from '../../cli/get-command.js';

export default defineGetCommand<Backup>({
  kind: 'backup',
  summary: 'List backups, or show the named ones.',
  examples: ['<%= config.bin %> backup get', '<%= config.bin %> backup get nightly -o yaml', '<%= config.bin %> backup get -l team=shop'],
  client: backupClient,
  columns: backupColumns,
});
