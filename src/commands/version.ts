import { Flags } from '@oclif/core';
import { BaseCommand, outputFlag } from '../cli/base-command.js';
import { render } from '../cli/output.js';
import { oneLine } from '../base/errors.js';
import { parseDuration } from '../cli/duration.js';
import { clientVersion } from '../base/version.js';

interface VersionResult {
  client: { version: string; nodeVersion: string };
  server?: { version?: string; error?: string };
}

export default class Version extends BaseCommand<typeof Version> {
  static override summary = 'Print the client version, and the server version when the cluster is reachable.';
  static override flags = {
    ...outputFlag,
    'client-only': Flags.boolean({ description: 'Only print the client version.', default: false }),
    timeout: Flags.string({ description: 'How long to wait for the server to answer.', default: '5s' }),
  };

  async run(): Promise<void> {
    const result: VersionResult = { client: { version: clientVersion(), nodeVersion: process.versions.node } };
    if (!this.flags['client-only']) {
      const timeoutMs = parseDuration('--timeout', this.flags.timeout);
      try {
        // Loaded only when asked for: the Kubernetes client is most of what a command loads at start (~870 modules),
        // and `version --client-only` needs none of it.
        const [{ connect }, { serverVersion }] = await Promise.all([import('../kube/client.js'), import('../cli/server-version.js')]);
        const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
        result.server = { version: await serverVersion(kube, { namespace: this.flags.namespace, timeoutMs }) };
      } catch (err) {
        result.server = { error: oneLine(err) };
      }
    }
    this.out(render(this.flags.output, result, renderText));
  }
}

function renderText(r: VersionResult): string {
  const lines = ['Client:', `\tVersion: ${r.client.version}`, `\tNode.js: ${r.client.nodeVersion}`];
  if (r.server) {
    lines.push('Server:', r.server.error ? `\t<error getting server version: ${r.server.error}>` : `\tVersion: ${r.server.version}`);
    if (r.server.version && r.server.version !== r.client.version) {
      lines.push('# WARNING: the client version does not match the server version. Please update the client or the server.');
    }
  }
  return lines.join('\n');
}
