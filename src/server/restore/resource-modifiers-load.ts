/**
 * Reads the resource modifiers a Restore names (`spec.resourceModifier`: kind `configmap`, a ConfigMap in the
 * Restore's namespace). A missing ConfigMap, another kind, or modifiers that do not parse are a problem, said in
 * one line with the line number of the YAML at fault: the restore fails validation with it.
 */
import type { Restore } from '../../api/index.js';
import type { Kube } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import { ResourceModifiersError, resourceModifiersFromConfigMap, type ResourceModifiers } from './resource-modifiers.js';

export type LoadedModifiers = { modifiers?: ResourceModifiers | undefined; problem?: undefined } | { modifiers?: undefined; problem: string };

export async function loadResourceModifiers(kube: Kube, restore: Restore): Promise<LoadedModifiers> {
  const ref = restore.spec.resourceModifier;
  if (!ref?.name) return {};
  const namespace = restore.metadata.namespace ?? '';
  if ((ref.kind ?? '').toLowerCase() !== 'configmap') return { problem: `resource modifier ${ref.kind ?? ''}/${ref.name}: only kind configmap is supported` };
  let cm;
  try {
    cm = await kube.core.readNamespacedConfigMap({ namespace, name: ref.name });
  } catch (err) {
    if (isNotFound(err) || isNotFound((err as { cause?: unknown }).cause)) return { problem: `failed to get resource modifiers configmap ${namespace}/${ref.name}: not found` };
    return { problem: `failed to get resource modifiers configmap ${namespace}/${ref.name}: ${(err as Error).message}` };
  }
  try {
    return { modifiers: resourceModifiersFromConfigMap({ metadata: { name: ref.name, namespace }, data: cm.data ?? {} }) };
  } catch (err) {
    if (err instanceof ResourceModifiersError) return { problem: `Error in parsing resource modifiers provided in configmap ${namespace}/${ref.name}: ${err.message}` };
    throw err;
  }
}
