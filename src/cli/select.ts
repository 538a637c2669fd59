/**
 * Which objects a read or delete command acts on: the ones named (each must exist), else every object in the
 * namespace matching the optional label selector. Always sorted by name, as Velero lists them.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { NotFoundError } from '../base/errors.js';
import type { CustomClient } from '../kube/custom.js';

/** Sorts by name. */
export function byName<T extends { metadata: { name?: string | undefined } }>(items: T[]): T[] {
  return [...items].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

export interface SelectOptions {
  namespace: string;
  names: readonly string[];
  selector?: string | undefined;
  /** How the kind is named in the not-found message: "backup", "backup storage location". */
  what: string;
}

export async function selectObjects<T extends KubernetesObject & { metadata: { name?: string | undefined } }>(
  client: CustomClient<T>,
  opts: SelectOptions,
): Promise<T[]> {
  if (!opts.names.length) return byName(await client.list(opts.namespace, opts.selector));
  const found: T[] = [];
  for (const name of opts.names) {
    const obj = await client.get(opts.namespace, name);
    if (!obj) throw new NotFoundError(`${opts.what} "${name}" not found in namespace "${opts.namespace}"`);
    found.push(obj);
  }
  return byName(found);
}
