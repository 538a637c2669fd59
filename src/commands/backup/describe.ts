import type { Backup } from '../../api/index.js';
import { backupClient } from '../../cli/backups.js';
import { backupDescription, describeBackup } from '../../cli/describe/backup.js';
import { defineDescribeStoredCommand } from '../../cli/describe/command.js';
import { gatherBackup } from '../../cli/describe/gather.js';

export default defineDescribeStoredCommand({
  kind: 'backup',
  summary: 'Describe backups in detail.',
  description: 'Prints the sections Velero prints, in the same order. Files kept in storage (results, volume info, resource list) are read through the cluster.',
  examples: ['<%= config.bin %> backup describe nightly', '<%= config.bin %> backup describe nightly --details', '<%= config.bin %> backup describe nightly -o json'],
  details: 'Add the resource list and per-volume information (method, snapshot ID, size, live progress of pod volume backups and data uploads).',
  client: backupClient,
  gather: gatherBackup,
  text: (backup: Backup, gathered, ctx) => describeBackup({ backup, details: ctx.details, colours: ctx.colours, ...gathered }),
  data: (backup: Backup, gathered, ctx) => backupDescription({ backup, details: ctx.details, ...gathered }),
});
