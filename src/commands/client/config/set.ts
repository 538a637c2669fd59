import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { applySet, clientConfigPath, loadClientConfig, saveClientConfig } from '../../../cli/client-config.js';

export default class ClientConfigSet extends BaseCommand<typeof ClientConfigSet> {
  static override summary = 'Set client configuration file values.';
  static override description =
    'Keys: namespace (the default for -n/--namespace), colorized (false turns colour off), features (kept for velero compatibility; cairn has none). ' +
    'An empty value removes the key. The file is $XDG_CONFIG_HOME/cairn/config.json, else ~/.config/cairn/config.json.';
  static override examples = ['<%= config.bin %> client config set namespace=backup-system colorized=false', '<%= config.bin %> client config set namespace='];
  static override args = { pairs: Args.string({ description: 'KEY=VALUE pairs.', required: true }) };
  static override strict = false;

  async run(): Promise<void> {
    const path = clientConfigPath();
    const { config, warnings } = applySet(loadClientConfig(path), this.positional);
    for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
    saveClientConfig(path, config);
  }
}
