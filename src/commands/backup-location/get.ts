import { Args } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
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
    const items = await selectObjects(client, { namespace: this.flags.namespace, names, what: 'backup storage location' });
    const value = names.length === 1 ? items[0] : asList(items);
    this.out(render(this.flags.output, value, () => formatTable(locationColumns, items)));
  }
}
