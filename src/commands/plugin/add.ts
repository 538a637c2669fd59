import { Args, Flags } from '@oclif/core';
import { confirm } from '@inquirer/prompts';
import { BaseCommand } from '../../cli/base-command.js';
import { UsageError } from '../../base/errors.js';
import { canPrompt } from '../../cli/progress.js';
import { addPlugin } from '../../cli/plugins.js';
import { checkPluginImage, pluginContainerName, PULL_POLICIES } from '../../install/plugins.js';
import { connect } from '../../kube/client.js';

export default class PluginAdd extends BaseCommand<typeof PluginAdd> {
  static override summary = 'Add a plugin image: an init container of the server copies its binary into /plugins.';
  static override description =
    'The server restarts to load it, which interrupts running backups and restores (cairn runs them again). Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> plugin add velero/velero-plugin-for-gcp:v1.14.2 --confirm'];
  static override args = { image: Args.string({ description: 'The plugin image.', required: true }) };
  static override flags = {
    'image-pull-policy': Flags.option({ options: PULL_POLICIES, default: 'IfNotPresent' as const, description: 'The imagePullPolicy of the plugin container.' })(),
    confirm: Flags.boolean({ description: 'Do not ask for confirmation.', default: false }),
  };

  async run(): Promise<void> {
    const image = checkPluginImage('IMAGE', this.args.image);
    if (!this.flags.confirm && !canPrompt()) throw new UsageError('--confirm', 'required when no terminal is attached');
    if (!this.flags.confirm) {
      const ok = await confirm({ message: 'Adding a plugin restarts the cairn server, which interrupts running backups and restores. Continue?', default: false });
      if (!ok) {
        this.out('Cancelled.');
        return;
      }
    }
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    await addPlugin(kube, { namespace: this.flags.namespace, image, pullPolicy: this.flags['image-pull-policy'] });
    this.out(`Plugin ${image} added as init container ${pluginContainerName(image)}; the server restarts to load it.`);
  }
}
