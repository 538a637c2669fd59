/**
 * Which of the custom resources a role watches the API server does not serve. A controller watching a resource
 * that does not exist retries its list forever, so a role started on a cluster without (all of) cairn's CRDs would
 * hang without saying why; it checks first and fails with the names instead (as Velero's server does).
 * Discovery (GET /apis/<group>/<version>) is open to every authenticated client, so no extra RBAC is needed.
 */
import { call, type Kube } from './client.js';
import { NotFoundError } from '../base/errors.js';

export interface ServedResource {
  group: string;
  version: string;
  plural: string;
}

/** `<plural>.<group>` of every resource in `wanted` the API server does not serve. */
export async function missingResources(kube: Kube, wanted: readonly ServedResource[]): Promise<string[]> {
  const byGroupVersion = new Map<string, ServedResource[]>();
  for (const r of wanted) {
    const key = `${r.group}/${r.version}`;
    byGroupVersion.set(key, [...(byGroupVersion.get(key) ?? []), r]);
  }
  const missing: string[] = [];
  for (const [groupVersion, resources] of byGroupVersion) {
    const [group = '', version = ''] = groupVersion.split('/');
    let served: Set<string>;
    try {
      const list = await call(kube, `discover ${groupVersion}`, () => kube.custom.getAPIResources({ group, version }));
      served = new Set(list.resources.map((r) => r.name));
    } catch (err) {
      // A group/version nothing serves at all: every resource of it is missing.
      if (!(err instanceof NotFoundError)) throw err;
      served = new Set();
    }
    for (const r of resources) if (!served.has(r.plural)) missing.push(`${r.plural}.${r.group} (${r.version})`);
  }
  return missing;
}

/** Throws a clear error naming the resources `role` needs that the cluster lacks. */
export async function requireResources(kube: Kube, role: string, wanted: readonly ServedResource[]): Promise<void> {
  const missing = await missingResources(kube, wanted);
  if (missing.length === 0) return;
  throw new Error(`${role} cannot start: the API server does not serve ${missing.join(', ')}; install or upgrade the CustomResourceDefinitions (\`cairn install\`, or \`kubectl apply -R -f config/crd\`)`);
}
