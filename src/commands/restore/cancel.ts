import { restoreClient } from '../../cli/restores.js';
import { defineCancelCommand } from '../../cli/cancel.js';

export default defineCancelCommand({
  kind: 'restore',
  summary: 'Cancel running restores: stop restoring items and volume data.',
  description:
    'Asks the server to cancel each restore (annotation cairn.io/cancel-requested). The server stops restoring items, stops its pod volume restores and data downloads and ends it Canceled; what was restored so far stays. Only a restore that is New or still running can be canceled. Without --confirm it asks first, which needs a terminal.',
  examples: ['<%= config.bin %> restore cancel shop-restore --confirm', '<%= config.bin %> restore cancel --all --confirm', '<%= config.bin %> restore cancel -l team=shop'],
  client: restoreClient,
});
