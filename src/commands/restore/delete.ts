import type { Restore } from '../../api/index.js';
import { defineDeleteCommand } from '../../cli/delete-command.js';
import { restoreClient } from '../../cli/restores.js';

export default defineDeleteCommand<Restore>({
  kind: 'restore',
  summary: 'Delete restores and their files in storage (restored objects stay).',
  client: restoreClient,
  async deleteOne(r, { namespace, client, out }) {
    await client.delete(namespace, r.metadata.name ?? '');
    out(`Request to delete restore "${r.metadata.name}" submitted successfully.`);
    out('The restore will be fully deleted after all associated data (restore files in object storage) are removed.');
  },
});
