// The bench's cluster contents: N namespaces of small objects, as a cluster of many tenants looks to a backup. Each
// namespace holds ITEMS_PER_NAMESPACE objects of its own (config maps, secrets, a service account, a role and its
// binding); Kubernetes adds its default service account and root CA config map. Objects that exist already (a
// --reuse run) are kept.
import type { Kube } from '../../src/kube/client.js';

export const ITEMS_PER_NAMESPACE = 12;
export const NAMESPACE_LABEL = 'bench-scale';

export function namespaceNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `scale-${String(i).padStart(5, '0')}`);
}

/** Runs `work` over `items` with at most `limit` at once. */
export async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}

async function createOrKeep(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

/** A few hundred bytes of text, like a small application setting. */
const SETTING = 'key=value\n'.repeat(40);

async function populateNamespace(k: Kube, namespace: string): Promise<void> {
  const labels = { [NAMESPACE_LABEL]: 'true' };
  await createOrKeep(() => k.core.createNamespace({ body: { metadata: { name: namespace, labels } } }));
  const work: (() => Promise<unknown>)[] = [];
  for (let i = 0; i < 6; i++) work.push(() => k.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: `settings-${i}`, labels }, data: { 'app.conf': SETTING } } }));
  for (let i = 0; i < 3; i++) work.push(() => k.core.createNamespacedSecret({ namespace, body: { metadata: { name: `token-${i}`, labels }, stringData: { token: `bench-token-${namespace}-${i}` } } }));
  work.push(() => k.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'app', labels } } }));
  work.push(() => k.rbac.createNamespacedRole({ namespace, body: { metadata: { name: 'app', labels }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] } }));
  work.push(() =>
    k.rbac.createNamespacedRoleBinding({
      namespace,
      body: { metadata: { name: 'app', labels }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'app' }, subjects: [{ kind: 'ServiceAccount', name: 'app', namespace }] },
    }),
  );
  await Promise.all(work.map(createOrKeep));
}

export async function populate(k: Kube, namespaces: readonly string[], onProgress: (done: number) => void): Promise<void> {
  let done = 0;
  await pool(namespaces, 16, async (ns) => {
    await populateNamespace(k, ns);
    if (++done % 250 === 0) onProgress(done);
  });
}
