/**
 * The command behind `backup delete`, `restore delete` and `schedule delete`: the named objects (each must exist) or
 * those of the selection, confirmed (asked unless --confirm), then deleted one by one the way each kind is deleted.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { connect, type Kube } from '../kube/client.js';
import type { CustomClient } from '../kube/custom.js';
import { BaseCommand } from './base-command.js';
import { selectObjects } from './select.js';
import { checkConfirmedSelection, confirmDeletion, confirmFlag, selectionFlags } from './selection.js';

export abstract class DeleteCommand<T extends KubernetesObject & { metadata: { name?: string | undefined } }> extends BaseCommand<typeof DeleteCommand> {
  static override strict = false;
  static override flags = { ...selectionFlags('Delete', 'objects'), ...confirmFlag };
  /** The kind as the messages name it ("backup"). */
  protected abstract readonly kind: string;
  protected abstract client(kube: Kube): CustomClient<T>;
  /** Deletes one confirmed object and says so. */
  protected abstract deleteOne(object: T, ctx: { kube: Kube; namespace: string; client: CustomClient<T> }): Promise<void>;

  async run(): Promise<void> {
    const names = this.positional;
    checkConfirmedSelection(this.kind, names, this.flags);

    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const namespace = this.flags.namespace;
    const client = this.client(kube);
    const objects = await selectObjects(client, { namespace, names, selector: this.flags.selector, what: this.kind });
    if (!objects.length) {
      this.out(`No ${this.kind}s found`);
      return;
    }
    if (!(await confirmDeletion(this.kind, objects.map((o) => o.metadata.name ?? ''), this.flags.confirm, (line) => this.out(line)))) return;
    for (const object of objects) await this.deleteOne(object, { kube, namespace, client });
  }
}
