import { BaseCommand, outputFlag } from '../cli/base-command.js';
import { clientVersion } from '../version.js';
import { render } from '../cli/output.js';

export default class Version extends BaseCommand<typeof Version> {
  static override summary = 'Print the client version (and the server version when the cluster is reachable).';
  static override flags = { ...outputFlag };

  async run(): Promise<void> {
    const result = { client: { version: clientVersion(), nodeVersion: process.versions.node } };
    this.out(render(this.flags.output, result, (r) => `Client:\n\tVersion: ${r.client.version}\n\tNode.js: ${r.client.nodeVersion}`));
  }
}
