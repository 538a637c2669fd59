import { Args, Flags } from '@oclif/core';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { NotFoundError } from '../../cli/errors.js';
import { asList, formatTable, render } from '../../cli/output.js';
import { backupClient, backupColumns, byName } from '../../cli/backups.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { connect } from '../../kube/client.js';

export default class BackupGet extends BaseCommand<typeof BackupGet> {
  static override summary = 'List backups, or show the named ones.';
  static override examples = ['<%= config.bin %> backup get', '<%= config.bin %> backup get nightly -o yaml', '<%= config.bin %> backup get -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of backups to show (default: all).' }) };
  static override strict = false;
  static override flags = {
    ...outputFlag,
    selector: Flags.string({ char: 'l', description: 'Only backups whose labels match this selector.' }),
  };

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const client = backupClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const names = this.positional;
    let items = byName(await client.list(this.flags.namespace, this.flags.selector));
    if (names.length) {
      const missing = names.filter((n) => !items.some((b) => b.metadata.name === n));
      if (missing.length) throw new NotFoundError(`backup "${missing[0]}" not found in namespace "${this.flags.namespace}"`);
      items = items.filter((b) => names.includes(b.metadata.name ?? ''));
    }
    if (this.flags.output === 'table' && !items.length) {
      this.out('No backups found');
      return;
    }
    const value = names.length === 1 ? items[0] : asList(items);
    this.out(render(this.flags.output, value, () => formatTable(backupColumns(), items)));
  }
}
