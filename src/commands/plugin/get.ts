import { Flags } from '@oclif/core';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { asList, formatTable, render } from '../../cli/output.js';
import { parseDuration } from '../../cli/duration.js';
import { serverStatus } from '../../cli/server-version.js';
import { pluginColumns, sortPlugins } from '../../cli/plugins.js';
import { connect } from '../../kube/client.js';

export default class PluginGet extends BaseCommand<typeof PluginGet> {
  static override summary = 'List the plugins the server runs: built-in and installed, with Velero\'s kinds.';
  static override description = 'Asks the running server (a ServerStatusRequest), as Velero\'s `plugin get` does.';
  static override flags = {
    ...outputFlag,
    timeout: Flags.string({ description: 'How long to wait for the server to answer.', default: '5s' }),
  };

  async run(): Promise<void> {
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const status = await serverStatus(kube, { namespace: this.flags.namespace, timeoutMs: parseDuration('--timeout', this.flags.timeout) });
    const rows = sortPlugins(status.plugins);
    this.out(render(this.flags.output, asList(rows), () => formatTable(pluginColumns, rows)));
  }
}
