import type { Schedule } from '../../api/index.js';
import { defineDeleteCommand } from '../../cli/delete-command.js';
import { scheduleClient } from '../../cli/schedules.js';

export default defineDeleteCommand<Schedule>({
  kind: 'schedule',
  summary: 'Delete schedules (their backups stay, unless the schedule owns them: --use-owner-references-in-backup).',
  description: 'Without --confirm it asks first, which needs a terminal.',
  examples: ['<%= config.bin %> schedule delete nightly --confirm', '<%= config.bin %> schedule delete --selector team=shop --confirm', '<%= config.bin %> schedule delete --all --confirm'],
  client: scheduleClient,
  async deleteOne(s, { namespace, client, out }) {
    await client.delete(namespace, s.metadata.name ?? '');
    out(`Schedule deleted: ${s.metadata.name}`);
  },
});
