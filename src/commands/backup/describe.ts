import { Args } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand } from '../../cli/base-command.js';
import { describeStoredFlags, renderDescriptions } from '../../cli/describe/command.js';
import { parseDuration } from '../../cli/duration.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { colours } from '../../cli/colour.js';
import { backupClient } from '../../cli/backups.js';
import { backupDescription, describeBackup } from '../../cli/describe/backup.js';
import { gatherBackup } from '../../cli/describe/gather.js';
import { connect } from '../../kube/client.js';
import type { Backup } from '../../api/index.js';

export default class BackupDescribe extends BaseCommand<typeof BackupDescribe> {
  static override summary = 'Describe backups in detail.';
  static override description =
    'Prints the sections Velero prints, in the same order. Files kept in storage (results, volume info, resource list) are read through the cluster.';
  static override examples = ['<%= config.bin %> backup describe nightly', '<%= config.bin %> backup describe nightly --details', '<%= config.bin %> backup describe nightly -o json'];
  static override args = { names: Args.string({ description: 'Names of backups to describe (default: all, or those matching --selector).' }) };
  static override strict = false;
  static override flags = describeStoredFlags(
    'backups',
    'Add the resource list and per-volume information (method, snapshot ID, size, live progress of pod volume backups and data uploads).',
  );

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const ns = this.flags.namespace;
    const client = backupClient(kube);
    const names = this.positional;
    const backups = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'backup' });

    const c = colours(this.colourEnabled(this.flags['no-color']));
    const gather = (backup: Backup, text: boolean) => gatherBackup(kube, backup, { namespace: ns, details: this.flags.details, text, timeoutMs, logger: this.log_ });
    this.out(
      await renderDescriptions({
        objects: backups,
        names,
        output: this.flags.output,
        kind: 'backups',
        text: async (backup) => describeBackup({ backup, details: this.flags.details, colours: c, ...(await gather(backup, true)) }),
        data: async (backup) => backupDescription({ backup, details: this.flags.details, ...(await gather(backup, false)) }),
      }),
    );
  }
}
