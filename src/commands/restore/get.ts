import type { Restore } from '../../api/index.js';
import { restoreClient, restoreColumns } from '../../cli/restores.js';
import { defineGetCommand } from '../../cli/get-command.js';

export default defineGetCommand<Restore>({
  kind: 'restore',
  summary: 'List restores, or show the named ones.',
  client: restoreClient,
  columns: restoreColumns,
});
