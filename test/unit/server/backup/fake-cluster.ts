/**
 * An in-memory API server for backup unit tests: serves discovery (/api/v1, /apis, /apis/<gv>), paged lists
 * (limit/continue, remainingItemCount) and gets, from a table of resources and objects.
 */
import { ApiException } from '@kubernetes/client-node';
import type { ApiReader } from '../../../../src/server/backup/api-reader.js';
import type { UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';

export interface FakeResource {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
  shortNames?: string[];
}

export const CORE: FakeResource[] = [
  { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, shortNames: ['ns'] },
  { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true, shortNames: ['po'] },
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true },
  { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true, shortNames: ['svc'] },
  { group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'] },
  { group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true, shortNames: ['pvc'] },
  { group: '', version: 'v1', resource: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false, shortNames: ['pv'] },
  { group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  { group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'] },
  { group: '', version: 'v1', resource: 'bindings', kind: 'Binding', namespaced: true, verbs: ['create'] },
  { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, shortNames: ['deploy'] },
  { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false, shortNames: ['crd'] },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
  { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true },
  { group: 'velero.io', version: 'v1', resource: 'backups', kind: 'Backup', namespaced: true },
];

export class FakeCluster implements ApiReader {
  readonly objects = new Map<string, UnstructuredObject[]>();
  readonly requests: string[] = [];
  /** Answer the next request that carries a continue token with 410 Gone (an expired token). */
  expireNextContinue = false;

  constructor(readonly resources: FakeResource[] = CORE) {}

  add(resource: string, obj: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> } & Record<string, unknown>): this {
    const r = this.resources.find((x) => x.resource === resource);
    if (!r) throw new Error(`unknown resource ${resource}`);
    const { name, namespace, labels, annotations, ...rest } = obj;
    const item: UnstructuredObject = {
      apiVersion: r.group ? `${r.group}/${r.version}` : r.version,
      kind: r.kind,
      metadata: { name, ...(namespace ? { namespace } : {}), ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}), uid: `uid-${resource}-${namespace ?? ''}-${name}` },
      ...rest,
    };
    const list = this.objects.get(resource) ?? [];
    list.push(item);
    this.objects.set(resource, list);
    return this;
  }

  namespace(name: string, labels?: Record<string, string>): this {
    return this.add('namespaces', { name, ...(labels ? { labels } : {}) });
  }

  async get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    this.requests.push(path);
    if (this.expireNextContinue && query.continue !== undefined) {
      this.expireNextContinue = false;
      throw new ApiException(410, 'gone', '{"message":"The provided continue parameter is too old"}', {});
    }
    const found = this.serve(path, query);
    if (found === undefined) throw new ApiException(404, 'not found', '{"message":"not found"}', {});
    return found as T;
  }

  async tryGet<T>(path: string): Promise<T | undefined> {
    try {
      return await this.get<T>(path);
    } catch (err) {
      if ((err as ApiException<unknown>).code === 404) return undefined;
      throw err;
    }
  }

  private serve(path: string, query: Record<string, string | number | undefined>): unknown {
    if (path === '/apis') {
      const groups = [...new Set(this.resources.filter((r) => r.group).map((r) => `${r.group}/${r.version}`))];
      return { groups: groups.map((gv) => ({ name: gv.split('/')[0], preferredVersion: { groupVersion: gv, version: gv.split('/')[1] } })) };
    }
    const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(path);
    if (!m) return undefined;
    const group = m[2] ?? '';
    const version = m[1] ?? m[3];
    const ns = m[4];
    const resource = m[5];
    const name = m[6] ? decodeURIComponent(m[6]) : undefined;
    if (!resource) {
      return {
        resources: this.resources
          .filter((r) => r.group === group && r.version === version)
          .map((r) => ({ name: r.resource, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs ?? ['get', 'list', 'watch', 'create'], shortNames: r.shortNames ?? [], singularName: r.kind.toLowerCase() })),
      };
    }
    const r = this.resources.find((x) => x.group === group && x.resource === resource);
    if (!r) return undefined;
    const byName = typeof query.fieldSelector === 'string' ? /^metadata\.name=(.+)$/.exec(query.fieldSelector)?.[1] : undefined;
    const all = (this.objects.get(resource) ?? []).filter((o) => (!ns || o.metadata.namespace === ns) && (byName === undefined || o.metadata.name === byName));
    if (name) return all.find((o) => o.metadata.name === name);
    const offset = Number(query.continue ?? 0);
    const limit = Number(query.limit ?? all.length);
    // List items carry no apiVersion/kind, as from a real API server.
    const page = all.slice(offset, offset + limit).map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
    const next = offset + limit < all.length ? String(offset + limit) : undefined;
    return { items: page, metadata: { ...(next ? { continue: next, remainingItemCount: all.length - offset - limit } : {}) } };
  }
}
