import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CairnError, NotFoundError } from '../../cli/errors.js';
import { parseDuration } from '../../cli/duration.js';
import { backupClient } from '../../cli/backups.js';
import { isBackupDone } from '../../api/index.js';
import { connect } from '../../kube/client.js';
import { fetchDownload } from '../../server/download/client.js';

export default class BackupLogs extends BaseCommand<typeof BackupLogs> {
  static override summary = "Print a backup's log.";
  static override description = 'The log is read through the cluster (a DownloadRequest), so it works even when the storage endpoint cannot be reached from here.';
  static override args = { name: Args.string({ required: true, description: 'Name of the backup.' }) };
  static override flags = {
    timeout: Flags.string({ description: 'How long to wait for the log (Go duration).', default: '1m' }),
  };

  async run(): Promise<void> {
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const name = this.args.name;
    const backup = await backupClient(kube).get(this.flags.namespace, name);
    if (!backup) throw new NotFoundError(`backup "${name}" not found in namespace "${this.flags.namespace}"`);
    if (!isBackupDone(backup.status?.phase)) {
      throw new CairnError(`logs for backup "${name}" are not available until it has finished (phase ${backup.status?.phase ?? 'New'}); try again once it is Completed or Failed`);
    }
    let log: Buffer;
    try {
      log = await fetchDownload(kube, { namespace: this.flags.namespace, kind: 'BackupLog', name, timeoutMs, gunzip: true, logger: this.log_ });
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError(`no log stored for backup "${name}"`);
      throw err;
    }
    process.stdout.write(log);
  }
}
