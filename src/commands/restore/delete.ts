import { Args } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand } from '../../cli/base-command.js';
import { checkConfirmedSelection, confirmDeletion, confirmFlag, selectionFlags } from '../../cli/selection.js';
import { restoreClient } from '../../cli/restores.js';
import { connect } from '../../kube/client.js';

export default class RestoreDelete extends BaseCommand<typeof RestoreDelete> {
  static override summary = 'Delete restores and their files in storage (restored objects stay).';
  static override args = { names: Args.string({ description: 'Names of restores to delete.' }) };
  static override strict = false;
  static override flags = { ...selectionFlags('Delete', 'restores'), ...confirmFlag };

  async run(): Promise<void> {
    const names = this.positional;
    checkConfirmedSelection('restore', names, this.flags);

    const client = restoreClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const ns = this.flags.namespace;
    const restores = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'restore' });
    if (!restores.length) {
      this.out('No restores found');
      return;
    }
    if (!(await confirmDeletion('restore', restores.map((o) => o.metadata.name ?? ''), this.flags.confirm, (line) => this.out(line)))) return;
    for (const r of restores) {
      await client.delete(ns, r.metadata.name ?? '');
      this.out(`Request to delete restore "${r.metadata.name}" submitted successfully.`);
      this.out('The restore will be fully deleted after all associated data (restore files in object storage) are removed.');
    }
  }
}
