/**
 * What the `describe` commands of backups, restores and schedules share: their flags, and how the described objects
 * are printed (text blocks apart from each other, or one object or a List as JSON/YAML).
 */
import { Flags } from '@oclif/core';
import { outputFlag } from '../base-command.js';
import { asList, formatJson, formatYaml, type OutputFormat } from '../output.js';

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
