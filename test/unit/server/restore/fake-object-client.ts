/** An in-memory ObjectClient for restore unit tests. */
import type { UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import { ApiError, type ObjectClient, type ObjectRef } from '../../../../src/server/restore/dynamic-client.js';

/** An API server in memory: objects by apiVersion/kind/namespace/name; CRDs are established at once. */
export class FakeCluster implements ObjectClient {
  readonly objects = new Map<string, UnstructuredObject>();
  readonly created: string[] = [];
  readonly statusWrites: { name: string; status: unknown }[] = [];
  failCreate?: (o: UnstructuredObject) => ApiError | undefined;

  private key(r: ObjectRef): string {
    return `${r.kind}/${r.namespace ?? ''}/${r.name}`;
  }
  async get(r: ObjectRef) {
    const o = this.objects.get(this.key(r));
    return o ? structuredClone(o) : undefined;
  }
  async create(o: UnstructuredObject) {
    const err = this.failCreate?.(o);
    if (err) throw err;
    const k = this.key({ ...o, name: o.metadata.name, namespace: o.metadata.namespace });
    if (this.objects.has(k)) throw new ApiError(409, 'AlreadyExists', `${o.kind} "${o.metadata.name}" already exists`);
    const stored = structuredClone(o);
    stored.metadata.uid = `uid-${this.created.length}`;
    if (o.kind === 'CustomResourceDefinition') stored.status = { conditions: [{ type: 'Established', status: 'True' }] };
    this.objects.set(k, stored);
    this.created.push(`${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`);
    return structuredClone(stored);
  }
  async mergePatch(r: ObjectRef, patch: object) {
    const o = this.objects.get(this.key(r));
    if (!o) throw new ApiError(404, 'NotFound', 'not found');
    const merge = (t: Record<string, unknown>, p: Record<string, unknown>) => {
      for (const [k, v] of Object.entries(p)) {
        if (v === null) delete t[k];
        else if (typeof v === 'object' && !Array.isArray(v) && typeof t[k] === 'object' && t[k] !== null) merge(t[k] as Record<string, unknown>, v as Record<string, unknown>);
        else t[k] = v;
      }
    };
    merge(o as unknown as Record<string, unknown>, patch as Record<string, unknown>);
    return structuredClone(o);
  }
  async replaceStatus(o: UnstructuredObject) {
    this.statusWrites.push({ name: `${o.kind} ${o.metadata.name}`, status: o.status });
    return o;
  }
}
