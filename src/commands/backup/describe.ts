import { Args } from '@oclif/core';
import type { Backup } from '../../api/index.js';
import { backupClient } from '../../cli/backups.js';
import { backupDescription, describeBackup } from '../../cli/describe/backup.js';
import { DescribeStoredCommand, describeStoredFlags, type DescribeContext } from '../../cli/describe/command.js';
import { gatherBackup } from '../../cli/describe/gather.js';
import type { Kube } from '../../kube/client.js';

export default class BackupDescribe extends DescribeStoredCommand<Backup> {
  static override summary = 'Describe backups in detail.';
  static override description =
    'Prints the sections Velero prints, in the same order. Files kept in storage (results, volume info, resource list) are read through the cluster.';
  static override examples = ['<%= config.bin %> backup describe nightly', '<%= config.bin %> backup describe nightly --details', '<%= config.bin %> backup describe nightly -o json'];
  static override args = { names: Args.string({ description: 'Names of backups to describe (default: all, or those matching --selector).' }) };
  static override flags = describeStoredFlags(
    'backups',
    'Add the resource list and per-volume information (method, snapshot ID, size, live progress of pod volume backups and data uploads).',
  );
  protected readonly kind = 'backup';

  protected client(kube: Kube) {
    return backupClient(kube);
  }

  protected async text(backup: Backup, ctx: DescribeContext): Promise<string> {
    return describeBackup({ backup, details: ctx.details, colours: ctx.colours, ...(await gather(backup, ctx, true)) });
  }

  protected async data(backup: Backup, ctx: DescribeContext): Promise<unknown> {
    return backupDescription({ backup, details: ctx.details, ...(await gather(backup, ctx, false)) });
  }
}

function gather(backup: Backup, ctx: DescribeContext, text: boolean) {
  return gatherBackup(ctx.kube, backup, { namespace: ctx.namespace, details: ctx.details, text, timeoutMs: ctx.timeoutMs, logger: ctx.logger });
}
