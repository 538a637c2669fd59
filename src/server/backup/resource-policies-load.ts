/**
 * Reads the resource policies a Backup names (`spec.resourcePolicy`: kind `configmap`, a ConfigMap in the Backup's
 * namespace). A missing ConfigMap, another kind, YAML that does not parse or policies Velero would refuse are a
 * problem, said in one line with the line number of the YAML at fault: the backup fails validation with it.
 */
import type { Backup } from '../../api/index.js';
import type { Kube } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import { ResourcePoliciesError, resourcePoliciesFromConfigMap, type ResourcePolicies } from './volume-policies.js';
import { usesOldResourceFilters } from './filters.js';

export type LoadedPolicies = { policies?: ResourcePolicies | undefined; problem?: undefined } | { policies?: undefined; problem: string };

export async function loadResourcePolicies(kube: Kube, backup: Backup): Promise<LoadedPolicies> {
  const ref = backup.spec?.resourcePolicy;
  if (!ref?.name) return {};
  if ((ref.kind ?? '').toLowerCase() !== 'configmap') {
    return { problem: `resource policy ${ref.kind ?? ''}/${ref.name}: only kind configmap is supported` };
  }
  const namespace = backup.metadata.namespace ?? '';
  let cm;
  try {
    cm = await kube.core.readNamespacedConfigMap({ namespace, name: ref.name });
  } catch (err) {
    if (isNotFound(err) || isNotFound((err as { cause?: unknown }).cause)) return { problem: `resource policies ConfigMap ${namespace}/${ref.name} not found` };
    return { problem: `cannot read the resource policies ConfigMap ${namespace}/${ref.name}: ${(err as Error).message}` };
  }
  try {
    const policies = resourcePoliciesFromConfigMap({ metadata: { name: ref.name, namespace }, data: cm.data ?? {} });
    if (policies.includeExcludePolicy && usesOldResourceFilters(backup.spec ?? {})) {
      return {
        problem:
          'include-resources, exclude-resources and include-cluster-resources are old filter parameters. They cannot be used with include-exclude policies.',
      };
    }
    return { policies };
  } catch (err) {
    if (err instanceof ResourcePoliciesError) return { problem: `invalid resource policies: ${err.message}` };
    throw err;
  }
}
