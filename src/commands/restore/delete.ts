import { Args } from '@oclif/core';
import type { Restore } from '../../api/index.js';
import { DeleteCommand } from '../../cli/delete-command.js';
import { confirmFlag, selectionFlags } from '../../cli/selection.js';
import { restoreClient } from '../../cli/restores.js';
import type { Kube } from '../../kube/client.js';
import type { CustomClient } from '../../kube/custom.js';

export default class RestoreDelete extends DeleteCommand<Restore> {
  static override summary = 'Delete restores and their files in storage (restored objects stay).';
  static override args = { names: Args.string({ description: 'Names of restores to delete.' }) };
  static override flags = { ...selectionFlags('Delete', 'restores'), ...confirmFlag };
  protected readonly kind = 'restore';

  protected client(kube: Kube) {
    return restoreClient(kube);
  }

  protected async deleteOne(r: Restore, ctx: { namespace: string; client: CustomClient<Restore> }): Promise<void> {
    await ctx.client.delete(ctx.namespace, r.metadata.name ?? '');
    this.out(`Request to delete restore "${r.metadata.name}" submitted successfully.`);
    this.out('The restore will be fully deleted after all associated data (restore files in object storage) are removed.');
  }
}
