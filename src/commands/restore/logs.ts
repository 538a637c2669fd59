import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { parseDuration } from '../../cli/duration.js';
import { fetchOperationLog } from '../../cli/logs.js';
import { connect } from '../../kube/client.js';

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
    const log = await fetchOperationLog(kube, { kind: 'restore', namespace: this.flags.namespace, name: this.args.name, timeoutMs, logger: this.log_ });
    process.stdout.write(log);
  }
}
