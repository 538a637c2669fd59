import type { Schedule } from '../../api/index.js';
import { scheduleClient, scheduleColumns } from '../../cli/schedules.js';
import { defineGetCommand } from '../../cli/get-command.js';

export default defineGetCommand<Schedule>({
  kind: 'schedule',
  summary: 'List schedules, or show the named ones.',
  examples: ['<%= config.bin %> schedule get', '<%= config.bin %> schedule get nightly -o yaml', '<%= config.bin %> schedule get -l team=shop'],
  client: scheduleClient,
  columns: scheduleColumns,
});
