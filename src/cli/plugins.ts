/**
 * `plugin add|remove|get`: the server Deployment's plugin init containers are edited in place (read, change,
 * replace; retried when someone else changed it meanwhile), and the server is asked which plugins it runs with a
 * ServerStatusRequest, as Velero's CLI does.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { SERVER_NAME } from '../api/install-names.js';
import { NotFoundError } from '../base/errors.js';
import type { Kube } from '../kube/client.js';
import { statusCode } from '../kube/errors.js';
import { withPlugin, withoutPlugin, type PullPolicy } from '../install/plugins.js';
import type { Column } from './output.js';

export interface PluginRow {
  name: string;
  kind: string;
}

/** Velero's order: by kind, then by name. */
export function sortPlugins(rows: readonly PluginRow[]): PluginRow[] {
  return [...rows].sort((a, b) => (a.kind !== b.kind ? (a.kind < b.kind ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export const pluginColumns: readonly Column<PluginRow>[] = [
  { header: 'name', value: (p) => p.name },
  { header: 'kind', value: (p) => p.kind },
];

async function editServerDeployment(kube: Kube, namespace: string, edit: (d: V1Deployment) => V1Deployment): Promise<V1Deployment> {
  for (let attempt = 0; ; attempt++) {
    let current: V1Deployment;
    try {
      current = await kube.apps.readNamespacedDeployment({ name: SERVER_NAME, namespace });
    } catch (err) {
      if (statusCode(err) === 404) throw new NotFoundError(`the cairn server Deployment "${SERVER_NAME}" is not in namespace ${namespace} (is cairn installed there?)`);
      throw err;
    }
    try {
      return await kube.apps.replaceNamespacedDeployment({ name: SERVER_NAME, namespace, body: edit(current) });
    } catch (err) {
      // Someone else changed it since it was read: read it again.
      if (statusCode(err) === 409 && attempt < 5) continue;
      throw err;
    }
  }
}

export async function addPlugin(kube: Kube, opts: { namespace: string; image: string; pullPolicy: PullPolicy }): Promise<V1Deployment> {
  return editServerDeployment(kube, opts.namespace, (d) => withPlugin(d, opts.image, opts.pullPolicy));
}

export async function removePlugin(kube: Kube, opts: { namespace: string; nameOrImage: string }): Promise<V1Deployment> {
  return editServerDeployment(kube, opts.namespace, (d) => withoutPlugin(d, opts.nameOrImage));
}
