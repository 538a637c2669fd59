import { Args, Flags } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { asList, formatJson, formatYaml } from '../../cli/output.js';
import { parseDuration } from '../../cli/duration.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { colours } from '../../cli/colour.js';
import { restoreClient, type RestoreDescription } from '../../cli/restores.js';
import { describeRestore, restoreDescription } from '../../cli/describe/restore.js';
import { gatherRestore } from '../../cli/describe/gather.js';
import { connect } from '../../kube/client.js';

export default class RestoreDescribe extends BaseCommand<typeof RestoreDescribe> {
  static override summary = 'Describe restores in detail.';
  static override description = 'Prints the sections Velero prints, in the same order. Files kept in storage are read through the cluster.';
  static override args = { names: Args.string({ description: 'Names of restores to describe (default: all, or those matching --selector).' }) };
  static override strict = false;
  static override flags = {
    ...outputFlag,
    selector: Flags.string({ char: 'l', description: 'Only restores whose labels match this selector.' }),
    details: Flags.boolean({ description: 'Add the list of restored resources and per-volume information (pod volume restores and data downloads with live progress).', default: false }),
    'no-color': Flags.boolean({ description: 'Never colour the output (also: NO_COLOR).', default: false }),
    timeout: Flags.string({ description: 'How long to wait for each file read through the cluster (Go duration).', default: '1m' }),
  };

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const ns = this.flags.namespace;
    const client = restoreClient(kube);
    const names = this.positional;
    const restores = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'restore' });

    const c = colours(this.colourEnabled(this.flags['no-color']));
    const texts: string[] = [];
    const descriptions: RestoreDescription[] = [];
    for (const restore of restores) {
      const g = await gatherRestore(kube, restore, { namespace: ns, details: this.flags.details, text: this.flags.output === 'table', timeoutMs, logger: this.log_ });
      if (this.flags.output === 'table') texts.push(describeRestore({ restore, details: this.flags.details, colours: c, ...g }));
      else
        descriptions.push(restoreDescription({ restore, details: this.flags.details, ...g }));
    }
    if (this.flags.output === 'table') {
      this.out(restores.length ? texts.join('\n\n') : 'No restores found');
      return;
    }
    const value = names.length === 1 ? descriptions[0] : asList(descriptions);
    this.out(this.flags.output === 'json' ? formatJson(value) : formatYaml(value));
  }
}
