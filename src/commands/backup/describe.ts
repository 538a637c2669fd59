import { Args, Flags } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { asList, formatJson, formatYaml } from '../../cli/output.js';
import { parseDuration } from '../../cli/duration.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { colours } from '../../cli/colour.js';
import { backupClient, type BackupDescription } from '../../cli/backups.js';
import { backupDescription, describeBackup } from '../../cli/describe/backup.js';
import { gatherBackup } from '../../cli/describe/gather.js';
import { connect } from '../../kube/client.js';

export default class BackupDescribe extends BaseCommand<typeof BackupDescribe> {
  static override summary = 'Describe backups in detail.';
  static override description =
    'Prints the sections Velero prints, in the same order. Files kept in storage (results, volume info, resource list) are read through the cluster.';
  static override examples = ['<%= config.bin %> backup describe nightly', '<%= config.bin %> backup describe nightly --details', '<%= config.bin %> backup describe nightly -o json'];
  static override args = { names: Args.string({ description: 'Names of backups to describe (default: all, or those matching --selector).' }) };
  static override strict = false;
  static override flags = {
    ...outputFlag,
    selector: Flags.string({ char: 'l', description: 'Only backups whose labels match this selector.' }),
    details: Flags.boolean({ description: 'Add the resource list and per-volume information (method, snapshot ID, size, live progress of pod volume backups and data uploads).', default: false }),
    'no-color': Flags.boolean({ description: 'Never colour the output (also: NO_COLOR).', default: false }),
    timeout: Flags.string({ description: 'How long to wait for each file read through the cluster (Go duration).', default: '1m' }),
  };

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const ns = this.flags.namespace;
    const client = backupClient(kube);
    const names = this.positional;
    const backups = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'backup' });

    const descriptions: BackupDescription[] = [];
    const texts: string[] = [];
    const c = colours(this.colourEnabled(this.flags['no-color']));
    for (const backup of backups) {
      const gathered = await gatherBackup(kube, backup, { namespace: ns, details: this.flags.details, text: this.flags.output === 'table', timeoutMs, logger: this.log_ });
      if (this.flags.output === 'table') {
        texts.push(describeBackup({ backup, details: this.flags.details, colours: c, ...gathered }));
      } else {
        descriptions.push(backupDescription({ backup, details: this.flags.details, ...gathered }));
      }
    }
    if (this.flags.output === 'table') {
      if (!backups.length) this.out('No backups found');
      else this.out(texts.join('\n\n'));
      return;
    }
    const value = names.length === 1 ? descriptions[0] : asList(descriptions);
    this.out(this.flags.output === 'json' ? formatJson(value) : formatYaml(value));
  }
}
