import { Args, Flags } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { asList, formatTable, render } from '../../cli/output.js';
import { restoreClient, restoreColumns } from '../../cli/restores.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { connect } from '../../kube/client.js';

export default class RestoreGet extends BaseCommand<typeof RestoreGet> {
  static override summary = 'List restores, or show the named ones.';
  static override args = { names: Args.string({ description: 'Names of restores to show (default: all).' }) };
  static override strict = false;
  static override flags = {
    ...outputFlag,
    selector: Flags.string({ char: 'l', description: 'Only restores whose labels match this selector.' }),
  };

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const client = restoreClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const names = this.positional;
    const items = await selectObjects(client, { namespace: this.flags.namespace, names, selector: this.flags.selector, what: 'restore' });
    if (this.flags.output === 'table' && !items.length) {
      this.out('No restores found');
      return;
    }
    const value = names.length === 1 ? items[0] : asList(items);
    this.out(render(this.flags.output, value, () => formatTable(restoreColumns(), items)));
  }
}
