import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { removePlugin } from '../../cli/plugins.js';
import { connect } from '../../kube/client.js';

export default class PluginRemove extends BaseCommand<typeof PluginRemove> {
  static override summary = 'Remove a plugin: its init container, by container name or image.';
  static override description = 'The server restarts without it. Backups in a location the plugin served cannot be read until it is back.';
  static override examples = ['<%= config.bin %> plugin remove velero-velero-plugin-for-gcp', '<%= config.bin %> plugin remove velero/velero-plugin-for-gcp:v1.14.2'];
  static override args = { name: Args.string({ description: 'Init container name or image of the plugin.', required: true }) };

  async run(): Promise<void> {
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    await removePlugin(kube, { namespace: this.flags.namespace, nameOrImage: this.args.name });
    this.out(`Plugin ${this.args.name} removed; the server restarts without it.`);
  }
}
