/**
 * The command behind `backup get`, `restore get` and `schedule get`: the named objects (each must exist) or all
 * matching the selector, as a table or as `-o json|yaml` (one object when one name was given, else a List).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { Args, Flags } from '@oclif/core';
import { connect, type Kube } from '../kube/client.js';
import type { CustomClient } from '../kube/custom.js';
import { BaseCommand, outputFlag } from './base-command.js';
import { parseLabelSelector } from './label-selector.js';
import { asList, formatTable, render, type Column } from './output.js';
import { selectObjects } from './select.js';

/** `-o` and `-l`, the selector worded for the kind (`objects`: "backups"). */
export function getFlags(objects: string) {
  return {
    ...outputFlag,
    selector: Flags.string({ char: 'l', description: `Only ${objects} whose labels match this selector.` }),
  };
}

type NamedObject = KubernetesObject & { metadata: { name?: string | undefined } };

export abstract class GetCommand<T extends NamedObject> extends BaseCommand<typeof GetCommand> {
  static override strict = false;
  static override flags = getFlags('objects');
  /** The kind as the messages name it ("backup"). */
  protected abstract readonly kind: string;
  protected abstract client(kube: Kube): CustomClient<T>;
  protected abstract columns(): readonly Column<T>[];

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const client = this.client(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const names = this.positional;
    const items = await selectObjects(client, { namespace: this.flags.namespace, names, selector: this.flags.selector, what: this.kind });
    if (this.flags.output === 'table' && !items.length) {
      this.out(`No ${this.kind}s found`);
      return;
    }
    const value = names.length === 1 ? items[0] : asList(items);
    this.out(render(this.flags.output, value, () => formatTable(this.columns(), items)));
  }
}

/** What one kind's `get` command is made of: its help texts, its client and its table. */
export interface GetCommandSpec<T extends NamedObject> {
  /** The kind as the messages name it ("backup"); its plural words the help. */
  kind: string;
  summary: string;
  examples?: string[];
  client: (kube: Kube) => CustomClient<T>;
  columns: () => readonly Column<T>[];
}

/** The `get` command of one kind. */
export function defineGetCommand<T extends NamedObject>(spec: GetCommandSpec<T>) {
  const command = class extends GetCommand<T> {
    static override summary = spec.summary;
    static override args = { names: Args.string({ description: `Names of ${spec.kind}s to show (default: all).` }) };
    static override flags = getFlags(`${spec.kind}s`);
    protected readonly kind = spec.kind;

    protected client(kube: Kube) {
      return spec.client(kube);
    }

    protected columns() {
      return spec.columns();
    }
  };
  // A kind without examples shows no EXAMPLES section.
  if (spec.examples) command.examples = spec.examples;
  return command;
}
