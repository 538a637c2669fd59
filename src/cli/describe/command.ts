/**
 * What the `describe` commands of backups, restores and schedules share: their flags, and how the described objects
 * are printed (text blocks apart from each other, or one object or a List as JSON/YAML).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { Args, Flags } from '@oclif/core';
import type { Logger } from '../../base/logger.js';
import { connect, type Kube } from '../../kube/client.js';
import type { CustomClient } from '../../kube/custom.js';
import { BaseCommand, outputFlag } from '../base-command.js';
import { colours, type Colours } from '../colour.js';
import { parseDuration } from '../duration.js';
import { parseLabelSelector } from '../label-selector.js';
import { asList, formatJson, formatYaml, type OutputFormat } from '../output.js';
import { selectObjects } from '../select.js';
import type { GatherOptions } from './gather.js';

/** `-o`, `--selector` and `--no-color`; `kind` is plural ("backups"). */
export function describeFlags(kind: string) {
  return {
    ...outputFlag,
    selector: Flags.string({ char: 'l', description: `Only ${kind} whose labels match this selector.` }),
    'no-color': Flags.boolean({ description: 'Never colour the output (also: NO_COLOR).', default: false }),
  };
}

/** describeFlags and what describing files kept in storage adds: `--details` (its help given) and `--timeout`. */
export function describeStoredFlags(kind: string, details: string) {
  return {
    ...describeFlags(kind),
    details: Flags.boolean({ description: details, default: false }),
    timeout: Flags.string({ description: 'How long to wait for each file read through the cluster (Go duration).', default: '1m' }),
  };
}

export interface RenderDescriptionsOptions<T> {
  objects: readonly T[];
  /** The names given: one name prints that object alone as JSON/YAML, anything else a List. */
  names: readonly string[];
  output: OutputFormat;
  /** Plural, for "No backups found". */
  kind: string;
  /** The text block of one object (`-o table`). */
  text: (object: T) => Promise<string> | string;
  /** The data of one object (`-o json|yaml`). */
  data: (object: T) => Promise<unknown> | unknown;
}

/** The command's whole output. Objects are described one after another: each may read files through the cluster. */
export async function renderDescriptions<T>(o: RenderDescriptionsOptions<T>): Promise<string> {
  if (o.output === 'table') {
    if (!o.objects.length) return `No ${o.kind} found`;
    const texts: string[] = [];
    for (const object of o.objects) texts.push(await o.text(object));
    return texts.join('\n\n');
  }
  const items: unknown[] = [];
  for (const object of o.objects) items.push(await o.data(object));
  const value = o.names.length === 1 ? items[0] : asList(items);
  return o.output === 'json' ? formatJson(value) : formatYaml(value);
}

/** What describing one backup or restore needs besides the object: where to read its files, and how to print. */
export interface DescribeContext {
  kube: Kube;
  namespace: string;
  details: boolean;
  timeoutMs: number;
  logger: Logger;
  colours: Colours;
}

/**
 * The command behind `backup describe` and `restore describe`: select the objects, then print each one's text (files
 * read for text output) or data (`-o json|yaml`). Each verb names its texts, kind, client and the two renderings.
 */
type NamedObject = KubernetesObject & { metadata: { name?: string | undefined } };

export abstract class DescribeStoredCommand<T extends NamedObject> extends BaseCommand<typeof DescribeStoredCommand> {
  static override strict = false;
  static override flags = describeStoredFlags('objects', 'More detail.');
  /** The kind as the messages name it ("backup"). */
  protected abstract readonly kind: string;
  protected abstract client(kube: Kube): CustomClient<T>;
  protected abstract text(object: T, ctx: DescribeContext): Promise<string>;
  protected abstract data(object: T, ctx: DescribeContext): Promise<unknown>;

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const namespace = this.flags.namespace;
    const names = this.positional;
    const objects = await selectObjects(this.client(kube), { namespace, names, selector: this.flags.selector, what: this.kind });
    const ctx: DescribeContext = { kube, namespace, details: this.flags.details, timeoutMs, logger: this.log_, colours: colours(this.colourEnabled(this.flags['no-color'])) };
    this.out(
      await renderDescriptions({
        objects,
        names,
        output: this.flags.output,
        kind: `${this.kind}s`,
        text: (object) => this.text(object, ctx),
        data: (object) => this.data(object, ctx),
      }),
    );
  }
}

/**
 * What `backup describe` and `restore describe` each name: their help texts, their client, how the files and objects
 * shown with one are gathered (`G`), and the two renderings of one with what was gathered.
 */
export interface DescribeStoredCommandSpec<T extends NamedObject, G> {
  /** The kind as the messages name it ("backup"); its plural words the help. */
  kind: string;
  summary: string;
  description: string;
  examples?: string[];
  /** The help of `--details`. */
  details: string;
  client: (kube: Kube) => CustomClient<T>;
  gather: (kube: Kube, object: T, opts: GatherOptions) => Promise<G>;
  text: (object: T, gathered: G, ctx: DescribeContext) => string;
  data: (object: T, gathered: G, ctx: DescribeContext) => unknown;
}

/** The `describe` command of one kind whose files are kept in storage. */
export function defineDescribeStoredCommand<T extends NamedObject, G>(spec: DescribeStoredCommandSpec<T, G>) {
  // Text output reads the volume info even without --details.
  const gather = (object: T, ctx: DescribeContext, text: boolean) =>
    spec.gather(ctx.kube, object, { namespace: ctx.namespace, details: ctx.details, text, timeoutMs: ctx.timeoutMs, logger: ctx.logger });
  const command = class extends DescribeStoredCommand<T> {
    static override summary = spec.summary;
    static override description = spec.description;
    static override args = { names: Args.string({ description: `Names of ${spec.kind}s to describe (default: all, or those matching --selector).` }) };
    static override flags = describeStoredFlags(`${spec.kind}s`, spec.details);
    protected readonly kind = spec.kind;

    protected client(kube: Kube) {
      return spec.client(kube);
    }

    protected async text(object: T, ctx: DescribeContext) {
      return spec.text(object, await gather(object, ctx, true), ctx);
    }

    protected async data(object: T, ctx: DescribeContext) {
      return spec.data(object, await gather(object, ctx, false), ctx);
    }
  };
  // A kind without examples shows no EXAMPLES section.
  if (spec.examples) command.examples = spec.examples;
  return command;
}
