import { backupClient } from '../../cli/backups.js';
import { defineCancelCommand } from '../../cli/cancel.js';

export default defineCancelCommand({
  kind: 'backup',
  summary: 'Cancel running backups: stop them and delete what they wrote.',
  description:
    'Asks the server to cancel each backup (annotation cairn.io/cancel-requested). The server stops the backup, stops its pod volume backups and data uploads, deletes what the backup wrote (its files in storage, its snapshots) and ends it Canceled. Only a backup that is New or still running can be canceled. Without --confirm it asks first, which needs a terminal.',
  examples: ['<%= config.bin %> backup cancel nightly-20260101 --confirm', '<%= config.bin %> backup cancel --all --confirm', '<%= config.bin %> backup cancel -l team=shop'],
  client: backupClient,
});
