/**
 * Typed access to cairn's custom resources. Objects read here are validated at the boundary (src/api parse),
 * and every status change goes through `updateStatus`: read fresh → mutate → write with the read
 * resourceVersion → on 409 Conflict read again and retry. Nothing is ever written from a stale cached copy.
 */
import { PatchStrategy, setHeaderOptions, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { call, type Kube } from './client.js';
import { isConflict, isNotFound, undefinedIfNotFound } from './errors.js';

/** What this module needs to know about a kind (src/api's kind definitions satisfy it). */
export interface ResourceKind {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  /** Whether the CRD enables the status subresource (status must then be written through /status). */
  readonly statusSubresource?: boolean;
}

export type Parser<T> = (obj: unknown) => T;

export interface CustomClient<T extends KubernetesObject> {
  get(namespace: string, name: string): Promise<T | undefined>;
  list(namespace: string, labelSelector?: string): Promise<T[]>;
  /** The list as an informer needs it: items plus the resourceVersion to watch from. */
  listForWatch(namespace: string, labelSelector?: string): Promise<KubernetesListObject<T>>;
  create(obj: T): Promise<T>;
  delete(namespace: string, name: string): Promise<boolean>;
  /** Merge-patches metadata/spec (e.g. a cancel flag); never status. */
  patch(namespace: string, name: string, patch: object): Promise<T>;
  /** Read → mutate → write, retried on conflict. `mutate` returns false to write nothing. */
  updateStatus(namespace: string, name: string, mutate: (obj: T) => boolean | void): Promise<T | undefined>;
  /** Same protocol for the whole object (labels, finalizers, spec). */
  update(namespace: string, name: string, mutate: (obj: T) => boolean | void): Promise<T | undefined>;
  path(namespace: string): string;
}

const MAX_CONFLICT_RETRIES = 10;

export function customClient<T extends KubernetesObject>(kube: Kube, kind: ResourceKind, parse: Parser<T>): CustomClient<T> {
  const base = { group: kind.group, version: kind.version, plural: kind.plural };
  const what = (ns: string, name?: string) => `${kind.kind} ${ns}/${name ?? ''}`;

  async function getRaw(namespace: string, name: string): Promise<T | undefined> {
    return undefinedIfNotFound(async () => parse(await kube.custom.getNamespacedCustomObject({ ...base, namespace, name })));
  }

  async function writeWithRetry(namespace: string, name: string, mutate: (obj: T) => boolean | void, statusOnly: boolean): Promise<T | undefined> {
    for (let attempt = 0; ; attempt++) {
      const current = await getRaw(namespace, name);
      if (!current) return undefined;
      const copy = structuredClone(current);
      if (mutate(copy) === false) return current;
      try {
        const body = copy as object;
        const written =
          statusOnly && kind.statusSubresource
            ? await kube.custom.replaceNamespacedCustomObjectStatus({ ...base, namespace, name, body })
            : await kube.custom.replaceNamespacedCustomObject({ ...base, namespace, name, body });
        return parse(written);
      } catch (err) {
        if (isConflict(err) && attempt < MAX_CONFLICT_RETRIES) continue;
        if (isNotFound(err)) return undefined;
        throw err;
      }
    }
  }

  async function listForWatch(namespace: string, labelSelector?: string): Promise<KubernetesListObject<T>> {
    return call(kube, `list ${kind.plural} in ${namespace}`, async () => {
      const res = (await kube.custom.listNamespacedCustomObject({ ...base, namespace, ...(labelSelector ? { labelSelector } : {}) })) as {
        items?: unknown[];
        metadata?: { resourceVersion?: string };
      };
      // List items omit apiVersion/kind; add them back. Items are not validated here: one malformed object must
      // not stop a watch; reconcilers validate what they read with get().
      const items = (res.items ?? []).map((i) => ({ apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, ...(i as object) }) as T);
      return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: res.metadata?.resourceVersion ?? '' }, items };
    });
  }

  return {
    path: (namespace) => `/apis/${kind.group}/${kind.version}/namespaces/${namespace}/${kind.plural}`,
    get: (namespace, name) => call(kube, `get ${what(namespace, name)}`, () => getRaw(namespace, name)),
    list: async (namespace, labelSelector) => (await listForWatch(namespace, labelSelector)).items.map((i) => parse(i)),
    listForWatch,
    create: (obj) =>
      call(kube, `create ${what(obj.metadata?.namespace ?? '', obj.metadata?.name)}`, async () =>
        parse(await kube.custom.createNamespacedCustomObject({ ...base, namespace: obj.metadata?.namespace ?? '', body: obj })),
      ),
    delete: (namespace, name) =>
      call(kube, `delete ${what(namespace, name)}`, async () => {
        try {
          await kube.custom.deleteNamespacedCustomObject({ ...base, namespace, name });
          return true;
        } catch (err) {
          if (isNotFound(err)) return false;
          throw err;
        }
      }),
    patch: (namespace, name, patch) =>
      call(kube, `patch ${what(namespace, name)}`, async () =>
        parse(await kube.custom.patchNamespacedCustomObject({ ...base, namespace, name, body: patch }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))),
      ),
    updateStatus: (namespace, name, mutate) => call(kube, `update status of ${what(namespace, name)}`, () => writeWithRetry(namespace, name, mutate, true)),
    update: (namespace, name, mutate) => call(kube, `update ${what(namespace, name)}`, () => writeWithRetry(namespace, name, mutate, false)),
  };
}
