import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { clientConfigPath, formatGet, loadClientConfig } from '../../../cli/client-config.js';

export default class ClientConfigGet extends BaseCommand<typeof ClientConfigGet> {
  static override summary = 'Get client configuration file values.';
  static override description = 'Prints `key: value` lines (all keys, sorted, or the keys named; `<NOT SET>` for a named key that is not set).';
  static override examples = ['<%= config.bin %> client config get', '<%= config.bin %> client config get namespace'];
  static override args = { keys: Args.string({ description: 'Keys to print (default: all).' }) };
  static override strict = false;

  async run(): Promise<void> {
    const text = formatGet(loadClientConfig(clientConfigPath()), this.positional);
    if (text) this.out(text);
  }
}
