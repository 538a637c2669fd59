/**
 * Removes what `install` created: workloads first (so no controller reacts), then finalizers on cairn's custom
 * resources (no controller is left to clear them), then CRDs, cluster-scoped RBAC and the namespace.
 * It never deletes objects in the storage location: backups stay there and a later install syncs them back.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { call, retryTransient, type Kube } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { pollUntil } from '../kube/wait.js';
import { allCrds } from '../api/index.js';
import { PART_OF, PART_OF_LABEL } from '../api/install-names.js';

export interface UninstallResult {
  deleted: string[];
}

async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Deleting a CRD waits for every object of it to go, in every namespace: finalizers no controller is left to clear
 * would hold the CRD (and `uninstall --wait`) forever.
 */
async function clearFinalizers(kube: Kube): Promise<void> {
  for (const crd of allCrds()) {
    const group = crd.spec.group;
    const plural = crd.spec.names.plural;
    const version = crd.spec.versions.find((v) => v.served)?.name;
    if (!version) continue;
    // Right after CRDs change the API server may answer 503 "storage is (re)initializing" for a while.
    const list = (await retryTransient(() => ignoreNotFound(kube.custom.listClusterCustomObject({ group, version, plural })))) as
      | { items?: KubernetesObject[] }
      | undefined;
    for (const item of list?.items ?? []) {
      if (!item.metadata?.finalizers?.length) continue;
      await ignoreNotFound(
        kube.custom.patchNamespacedCustomObject({
          group, version, namespace: item.metadata.namespace ?? '', plural, name: item.metadata.name ?? '',
          body: [{ op: 'remove', path: '/metadata/finalizers' }],
        }),
      );
    }
  }
}

export async function uninstall(kube: Kube, opts: { namespace: string; wait: boolean; timeoutMs: number; onStep?: (s: string) => void }): Promise<UninstallResult> {
  const ns = opts.namespace;
  const deleted: string[] = [];
  const step = (s: string) => {
    deleted.push(s);
    opts.onStep?.(s);
  };
  const selector = `${PART_OF_LABEL}=${PART_OF}`;

  await call(kube, 'delete cairn workloads', async () => {
    const deps = await kube.apps.listNamespacedDeployment({ namespace: ns, labelSelector: selector });
    for (const d of deps.items) {
      await ignoreNotFound(kube.apps.deleteNamespacedDeployment({ name: d.metadata?.name ?? '', namespace: ns }));
      step(`Deployment ${ns}/${d.metadata?.name}`);
    }
    const dss = await kube.apps.listNamespacedDaemonSet({ namespace: ns, labelSelector: selector });
    for (const d of dss.items) {
      await ignoreNotFound(kube.apps.deleteNamespacedDaemonSet({ name: d.metadata?.name ?? '', namespace: ns }));
      step(`DaemonSet ${ns}/${d.metadata?.name}`);
    }
  });
  await call(kube, 'clear finalizers of cairn resources', () => clearFinalizers(kube));
  await call(kube, 'delete CRDs', async () => {
    for (const crd of allCrds()) {
      const name = crd.metadata.name;
      if (await ignoreNotFound(kube.apiext.deleteCustomResourceDefinition({ name }))) step(`CustomResourceDefinition ${name}`);
    }
  });
  await call(kube, 'delete cluster RBAC', async () => {
    const bindings = await kube.rbac.listClusterRoleBinding({ labelSelector: selector });
    for (const b of bindings.items) {
      // Only the bindings whose subjects live in this install's namespace.
      if (!b.subjects?.some((s) => s.namespace === ns)) continue;
      await ignoreNotFound(kube.rbac.deleteClusterRoleBinding({ name: b.metadata?.name ?? '' }));
      step(`ClusterRoleBinding ${b.metadata?.name}`);
      const roleName = b.roleRef.name;
      if (await ignoreNotFound(kube.rbac.deleteClusterRole({ name: roleName }))) step(`ClusterRole ${roleName}`);
    }
  });
  const nsObj = await call(kube, `delete namespace ${ns}`, () => ignoreNotFound(kube.core.deleteNamespace({ name: ns })));
  if (nsObj) step(`Namespace ${ns}`);
  if (opts.wait && nsObj) {
    await pollUntil(
      async () => ({ done: !(await ignoreNotFound(kube.core.readNamespace({ name: ns }))), state: 'Terminating' }),
      { what: `namespace ${ns} to be deleted`, timeoutMs: opts.timeoutMs, intervalMs: 1000 },
    );
  }
  return { deleted };
}
