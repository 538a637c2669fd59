import { Flags } from '@oclif/core';
import { confirm } from '@inquirer/prompts';
import { BaseCommand } from '../cli/base-command.js';
import { UsageError } from '../base/errors.js';
import { canPrompt } from '../cli/progress.js';
import { parseDuration } from '../cli/duration.js';
import { connect, checkReachable } from '../kube/client.js';
import { uninstall } from '../install/uninstall.js';

export default class Uninstall extends BaseCommand<typeof Uninstall> {
  static override summary = 'Remove cairn from the cluster. Data in storage locations is never touched.';
  static override description = `Deletes the server, the node agent, cairn's CRDs (and with them the Backup and Restore objects in the
cluster), its RBAC and its namespace. Backups stay in object storage; installing again brings them back by sync.`;
  static override flags = {
    force: Flags.boolean({ description: 'Do not ask for confirmation.', default: false }),
    wait: Flags.boolean({ description: 'Wait until the namespace is gone.', default: false }),
    timeout: Flags.string({ description: 'How long --wait waits.', default: '5m' }),
  };

  async run(): Promise<void> {
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const ns = this.flags.namespace;
    if (!this.flags.force) {
      if (!canPrompt()) throw new UsageError('--force', 'uninstall asks for confirmation; pass --force when no terminal is attached');
      const ok = await confirm({ message: `Remove cairn from namespace "${ns}" (backups in storage are kept)?`, default: false });
      if (!ok) {
        this.out('Nothing removed.');
        return;
      }
    }
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    await checkReachable(kube);
    const result = await uninstall(kube, { namespace: ns, wait: this.flags.wait, timeoutMs, onStep: (s) => this.out(`${s}: deleted`) });
    this.out(result.deleted.length ? `cairn uninstalled from namespace "${ns}".` : `cairn was not installed in namespace "${ns}".`);
  }
}
