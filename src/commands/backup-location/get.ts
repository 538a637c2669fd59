import { Args } from '@oclif/core';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { NotFoundError } from '../../cli/errors.js';
import { asList, formatTable, render } from '../../cli/output.js';
import { connect } from '../../kube/client.js';
import { locationClient, locationColumns } from '../../cli/backup-locations.js';

export default class BackupLocationGet extends BaseCommand<typeof BackupLocationGet> {
  static override summary = 'List backup storage locations, or show the named ones.';
  static override args = { names: Args.string({ description: 'Names of locations to show (default: all).' }) };
  static override strict = false;
  static override flags = { ...outputFlag };

  async run(): Promise<void> {
    const client = locationClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const names = this.positional;
    let items = await client.list(this.flags.namespace);
    if (names.length) {
      const missing = names.filter((n) => !items.some((l) => l.metadata.name === n));
      if (missing.length) throw new NotFoundError(`backup storage location "${missing[0]}" not found in namespace "${this.flags.namespace}"`);
      items = items.filter((l) => names.includes(l.metadata.name ?? ''));
    }
    items.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    const value = names.length === 1 ? items[0] : asList(items);
    this.out(render(this.flags.output, value, () => formatTable(locationColumns, items)));
  }
}
