/**
 * The command behind `backup delete`, `restore delete` and `schedule delete`: the named objects (each must exist) or
 * those of the selection, confirmed (asked unless --confirm), then deleted one by one the way each kind is deleted.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { Args } from '@oclif/core';
import { connect, type Kube } from '../kube/client.js';
import type { CustomClient } from '../kube/custom.js';
import { BaseCommand } from './base-command.js';
import { selectObjects } from './select.js';
import { checkConfirmedSelection, confirmDeletion, confirmFlag, selectionFlags } from './selection.js';

type NamedObject = KubernetesObject & { metadata: { name?: string | undefined } };

/** What deleting one object may use: the cluster, the install namespace, the kind's client and the command's output. */
export interface DeleteContext<T extends NamedObject> {
  kube: Kube;
  namespace: string;
  client: CustomClient<T>;
  out: (line: string) => void;
}

export abstract class DeleteCommand<T extends NamedObject> extends BaseCommand<typeof DeleteCommand> {
  static override strict = false;
  static override flags = { ...selectionFlags('Delete', 'objects'), ...confirmFlag };
  /** The kind as the messages name it ("backup"). */
  protected abstract readonly kind: string;
  protected abstract client(kube: Kube): CustomClient<T>;
  /** Deletes one confirmed object and says so. */
  protected abstract deleteOne(object: T, ctx: DeleteContext<T>): Promise<void>;

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
    const out = (line: string) => this.out(line);
    for (const object of objects) await this.deleteOne(object, { kube, namespace, client, out });
  }
}

/** What one kind's `delete` command is made of: its help texts, its client and how one object is deleted. */
export interface DeleteCommandSpec<T extends NamedObject> {
  /** The kind as the messages name it ("backup"); its plural words the help. */
  kind: string;
  summary: string;
  description?: string;
  examples?: string[];
  client: (kube: Kube) => CustomClient<T>;
  /** Deletes one confirmed object and says so. */
  deleteOne: (object: T, ctx: DeleteContext<T>) => Promise<void>;
}

/** The `delete` command of one kind. */
export function defineDeleteCommand<T extends NamedObject>(spec: DeleteCommandSpec<T>) {
  const command = class extends DeleteCommand<T> {
    static override summary = spec.summary;
    static override args = { names: Args.string({ description: `Names of ${spec.kind}s to delete.` }) };
    static override flags = { ...selectionFlags('Delete', `${spec.kind}s`), ...confirmFlag };
    protected readonly kind = spec.kind;

    protected client(kube: Kube) {
      return spec.client(kube);
    }

    protected deleteOne(object: T, ctx: DeleteContext<T>) {
      return spec.deleteOne(object, ctx);
    }
  };
  // A kind without them shows no DESCRIPTION or EXAMPLES section.
  if (spec.description) command.description = spec.description;
  if (spec.examples) command.examples = spec.examples;
  return command;
}
