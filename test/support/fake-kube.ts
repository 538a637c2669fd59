/**
 * A small in-memory API server for controller unit tests: the custom-object calls cairn's custom client and
 * controllers make (get, list, create, replace, replace status, delete, merge patch) with resourceVersions, optimistic
 * concurrency (a replace of a stale version fails with 409), finalizers and generateName, namespaced and cluster-wide. Pods and their logs are
 * kept too, for the node agent. It records every write, so a test can say what a reconcile did.
 */
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import type { Kube } from '../../src/kube/client.js';

interface CustomRef {
  group: string;
  version: string;
  plural: string;
  namespace: string;
  name?: string;
}

type Obj = KubernetesObject & Record<string, unknown>;

export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Write {
  verb: 'create' | 'replace' | 'status' | 'delete' | 'patch';
  plural: string;
  name: string;
}

export class FakeKube {
  private readonly store = new Map<string, Obj>();
  private lastResourceVersion = 0;
  private generated = 0;
  readonly writes: Write[] = [];
  readonly pods = new Map<string, V1Pod>();
  /** Called before every write (a test makes a write fail or races another writer here). */
  beforeWrite?: (write: Write) => void;

  private key(r: CustomRef, name = r.name ?? ''): string {
    return `${r.group}/${r.plural}/${r.namespace}/${name}`;
  }

  private record(write: Write): void {
    this.beforeWrite?.(write);
    this.writes.push(write);
  }

  /** Stores an object as the API server would have it (a resourceVersion is given). */
  put<T extends KubernetesObject>(r: Omit<CustomRef, 'name'>, obj: T): T {
    const stored = structuredClone(obj) as Obj;
    stored.metadata = { ...stored.metadata, namespace: r.namespace, resourceVersion: String(++this.lastResourceVersion), uid: stored.metadata?.uid ?? `uid-${stored.metadata?.name}` };
    this.store.set(this.key(r, stored.metadata?.name), stored);
    return structuredClone(stored) as T;
  }

  /** The stored object, or undefined. */
  get<T extends KubernetesObject>(r: Omit<CustomRef, 'name'>, name: string): T | undefined {
    const o = this.store.get(this.key(r, name));
    return o ? (structuredClone(o) as T) : undefined;
  }

  private must(r: CustomRef): Obj {
    const o = this.store.get(this.key(r));
    if (!o) throw new ApiError(404, `${r.plural} ${r.name} not found`);
    return o;
  }

  private replace(r: CustomRef & { body: object }, part: 'all' | 'status'): Obj {
    const current = this.must(r);
    const body = structuredClone(r.body) as Obj;
    if (body.metadata?.resourceVersion !== current.metadata?.resourceVersion) throw new ApiError(409, `${r.plural} ${r.name}: the object has been modified`);
    // No status subresource semantics: a replace writes what it is given (as for cairn's kinds without one).
    const next: Obj = part === 'status' ? { ...current, status: body.status } : body;
    next.metadata = { ...next.metadata, resourceVersion: String(++this.lastResourceVersion) };
    // An object being deleted goes once its last finalizer does.
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      this.store.delete(this.key(r));
      return structuredClone(next);
    }
    this.store.set(this.key(r), next);
    return structuredClone(next);
  }

  readonly custom = {
    getNamespacedCustomObject: async (r: CustomRef) => structuredClone(this.must(r)),
    listNamespacedCustomObject: async (r: CustomRef & { labelSelector?: string }) => {
      const prefix = this.key(r, '');
      const items = [...this.store.entries()].filter(([k]) => k.startsWith(prefix)).map(([, o]) => structuredClone(o));
      return { items: items.filter((o) => matchesSelector(o, r.labelSelector)), metadata: { resourceVersion: String(this.lastResourceVersion) } };
    },
    // Cluster-wide: objects of every namespace; cluster-scoped objects are kept under the namespace ''.
    listClusterCustomObject: async (r: Omit<CustomRef, 'namespace'> & { labelSelector?: string }) => {
      const prefix = `${r.group}/${r.plural}/`;
      const items = [...this.store.entries()].filter(([k]) => k.startsWith(prefix)).map(([, o]) => structuredClone(o));
      return { items: items.filter((o) => matchesSelector(o, r.labelSelector)), metadata: { resourceVersion: String(this.lastResourceVersion) } };
    },
    getClusterCustomObject: async (r: Omit<CustomRef, 'namespace'>) => structuredClone(this.must({ ...r, namespace: '' })),
    createNamespacedCustomObject: async (r: CustomRef & { body: object }) => {
      const body = structuredClone(r.body) as Obj;
      const name = body.metadata?.name ?? `${body.metadata?.generateName ?? ''}${(++this.generated).toString(36).padStart(5, '0')}`;
      this.record({ verb: 'create', plural: r.plural, name });
      if (this.store.has(this.key(r, name))) throw new ApiError(409, `${r.plural} ${name} already exists`);
      return this.put(r, { ...body, metadata: { ...body.metadata, name } });
    },
    replaceNamespacedCustomObject: async (r: CustomRef & { body: object }) => {
      this.record({ verb: 'replace', plural: r.plural, name: r.name ?? '' });
      return this.replace(r, 'all');
    },
    replaceNamespacedCustomObjectStatus: async (r: CustomRef & { body: object }) => {
      this.record({ verb: 'status', plural: r.plural, name: r.name ?? '' });
      return this.replace(r, 'status');
    },
    deleteNamespacedCustomObject: async (r: CustomRef) => {
      this.record({ verb: 'delete', plural: r.plural, name: r.name ?? '' });
      const o = this.must(r);
      if ((o.metadata?.finalizers ?? []).length > 0) {
        o.metadata = { ...o.metadata, deletionTimestamp: new Date(0), resourceVersion: String(++this.lastResourceVersion) };
      } else {
        this.store.delete(this.key(r));
      }
      return {};
    },
    patchNamespacedCustomObject: async (r: CustomRef & { body: object }) => {
      this.record({ verb: 'patch', plural: r.plural, name: r.name ?? '' });
      const o = this.must(r);
      const patched = mergePatch(o, r.body) as Obj;
      patched.metadata = { ...patched.metadata, resourceVersion: String(++this.lastResourceVersion) };
      this.store.set(this.key(r), patched);
      return structuredClone(patched);
    },
  };

  readonly core = {
    readNamespacedPod: async (r: { namespace: string; name: string }) => {
      const pod = this.pods.get(`${r.namespace}/${r.name}`);
      if (!pod) throw new ApiError(404, `pod ${r.name} not found`);
      return structuredClone(pod);
    },
    readNamespacedPodLog: async () => '',
  };

  readonly version = {
    getCode: async () => ({ gitVersion: 'v1.36.3', major: '1', minor: '36' }),
  };

  /** This fake as the `Kube` that controllers take (only the calls above exist). */
  kube(): Kube {
    return { server: 'https://fake', custom: this.custom, core: this.core, version: this.version } as unknown as Kube;
  }
}

/** Equality-based label selectors (`k=v,k2=v2`), the only kind cairn's controllers use. */
function matchesSelector(o: KubernetesObject, selector = ''): boolean {
  const wanted = selector.split(',').filter(Boolean).map((p) => p.split('='));
  return wanted.every(([k, v]) => o.metadata?.labels?.[k ?? ''] === v);
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
