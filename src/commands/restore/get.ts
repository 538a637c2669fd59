import { Args, Flags } from '@oclif/core';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { NotFoundError } from '../../cli/errors.js';
import { asList, formatTable, render } from '../../cli/output.js';
import { byName } from '../../cli/backups.js';
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
    let items = byName(await client.list(this.flags.namespace, this.flags.selector));
    if (names.length) {
      const missing = names.filter((n) => !items.some((r) => r.metadata.name === n));
      if (missing.length) throw new NotFoundError(`restore "${missing[0]}" not found in namespace "${this.flags.namespace}"`);
      items = items.filter((r) => names.includes(r.metadata.name ?? ''));
    }
    if (this.flags.output === 'table' && !items.length) {
      this.out('No restores found');
      return;
    }
    const value = names.length === 1 ? items[0] : asList(items);
    this.out(render(this.flags.output, value, () => formatTable(restoreColumns(), items)));
  }
}
