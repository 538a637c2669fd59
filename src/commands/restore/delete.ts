import { Args, Flags } from '@oclif/core';
import { confirm } from '@inquirer/prompts';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand } from '../../cli/base-command.js';
import { UsageError } from '../../base/errors.js';
import { canPrompt } from '../../cli/progress.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { restoreClient } from '../../cli/restores.js';
import { connect } from '../../kube/client.js';

export default class RestoreDelete extends BaseCommand<typeof RestoreDelete> {
  static override summary = 'Delete restores and their files in storage (restored objects stay).';
  static override args = { names: Args.string({ description: 'Names of restores to delete.' }) };
  static override strict = false;
  static override flags = {
    all: Flags.boolean({ description: 'Delete all restores.', default: false }),
    selector: Flags.string({ char: 'l', description: 'Delete the restores whose labels match this selector.' }),
    confirm: Flags.boolean({ description: 'Do not ask for confirmation.', default: false }),
  };

  async run(): Promise<void> {
    const names = this.positional;
    const given = [names.length > 0, this.flags.all, Boolean(this.flags.selector)].filter(Boolean).length;
    if (given === 0) throw new UsageError('NAMES', 'give restore names, --selector or --all');
    if (given > 1) throw new UsageError('--all', 'use only one of restore names, --selector and --all');
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    if (!this.flags.confirm && !canPrompt()) throw new UsageError('--confirm', 'required when no terminal is attached');

    const client = restoreClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const ns = this.flags.namespace;
    const restores = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'restore' });
    if (!restores.length) {
      this.out('No restores found');
      return;
    }
    if (!this.flags.confirm) {
      const list = restores.map((r) => r.metadata.name).join(', ');
      const ok = await confirm({ message: `Delete restore${restores.length > 1 ? 's' : ''} ${list}? Are you sure you want to continue?`, default: false });
      if (!ok) {
        this.out('Cancelled.');
        return;
      }
    }
    for (const r of restores) {
      await client.delete(ns, r.metadata.name ?? '');
      this.out(`Request to delete restore "${r.metadata.name}" submitted successfully.`);
      this.out('The restore will be fully deleted after all associated data (restore files in object storage) are removed.');
    }
  }
}
