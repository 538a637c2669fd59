import { Args } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand } from '../../cli/base-command.js';
import { describeStoredFlags, renderDescriptions } from '../../cli/describe/command.js';
import { parseDuration } from '../../cli/duration.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { colours } from '../../cli/colour.js';
import { restoreClient } from '../../cli/restores.js';
import { describeRestore, restoreDescription } from '../../cli/describe/restore.js';
import { gatherRestore } from '../../cli/describe/gather.js';
import { connect } from '../../kube/client.js';
import type { Restore } from '../../api/index.js';

export default class RestoreDescribe extends BaseCommand<typeof RestoreDescribe> {
  static override summary = 'Describe restores in detail.';
  static override description = 'Prints the sections Velero prints, in the same order. Files kept in storage are read through the cluster.';
  static override args = { names: Args.string({ description: 'Names of restores to describe (default: all, or those matching --selector).' }) };
  static override strict = false;
  static override flags = describeStoredFlags('restores', 'Add the list of restored resources and per-volume information (pod volume restores and data downloads with live progress).');

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const ns = this.flags.namespace;
    const client = restoreClient(kube);
    const names = this.positional;
    const restores = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'restore' });

    const c = colours(this.colourEnabled(this.flags['no-color']));
    const gather = (restore: Restore, text: boolean) => gatherRestore(kube, restore, { namespace: ns, details: this.flags.details, text, timeoutMs, logger: this.log_ });
    this.out(
      await renderDescriptions({
        objects: restores,
        names,
        output: this.flags.output,
        kind: 'restores',
        text: async (restore) => describeRestore({ restore, details: this.flags.details, colours: c, ...(await gather(restore, true)) }),
        data: async (restore) => restoreDescription({ restore, details: this.flags.details, ...(await gather(restore, false)) }),
      }),
    );
  }
}
