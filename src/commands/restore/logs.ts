import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CairnError, NotFoundError } from '../../cli/errors.js';
import { parseDuration } from '../../cli/duration.js';
import { restoreClient } from '../../cli/restores.js';
import { isRestoreDone } from '../../api/index.js';
import { connect } from '../../kube/client.js';
import { fetchDownload } from '../../server/download/client.js';

export default class RestoreLogs extends BaseCommand<typeof RestoreLogs> {
  static override summary = "Print a restore's log.";
  static override description = 'The log is read through the cluster (a DownloadRequest), so it works even when the storage endpoint cannot be reached from here.';
  static override args = { name: Args.string({ required: true, description: 'Name of the restore.' }) };
  static override flags = {
    timeout: Flags.string({ description: 'How long to wait for the log (Go duration).', default: '1m' }),
  };

  async run(): Promise<void> {
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const name = this.args.name;
    const restore = await restoreClient(kube).get(this.flags.namespace, name);
    if (!restore) throw new NotFoundError(`restore "${name}" not found in namespace "${this.flags.namespace}"`);
    if (!isRestoreDone(restore.status?.phase)) {
      throw new CairnError(`logs for restore "${name}" are not available until it has finished (phase ${restore.status?.phase ?? 'New'}); try again once it is Completed or Failed`);
    }
    let log: Buffer;
    try {
      log = await fetchDownload(kube, { namespace: this.flags.namespace, kind: 'RestoreLog', name, timeoutMs, gunzip: true, logger: this.log_ });
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError(`no log stored for restore "${name}"`);
      throw err;
    }
    process.stdout.write(log);
  }
}
