/**
 * Applies install objects with server-side apply (field manager "cairn-install"), so a second run changes
 * nothing and reports "unchanged". CRDs are applied first and must be Established before any custom object.
 */
import { PatchStrategy, type KubernetesObject, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { call, type Kube } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import type { Clock } from '../base/clock.js';
import { pollUntil } from '../kube/wait.js';

export const FIELD_MANAGER = 'cairn-install';

export type ApplyAction = 'created' | 'configured' | 'unchanged';

export interface AppliedObject {
  kind: string;
  name: string;
  namespace?: string;
  action: ApplyAction;
}

export function describeObject(o: KubernetesObject): string {
  const ns = o.metadata?.namespace ? `${o.metadata.namespace}/` : '';
  return `${o.kind} ${ns}${o.metadata?.name ?? ''}`;
}

async function readOrUndefined(kube: Kube, obj: KubernetesObject): Promise<KubernetesObject | undefined> {
  try {
    return await kube.objects.read({
      apiVersion: obj.apiVersion ?? '',
      kind: obj.kind ?? '',
      metadata: { name: obj.metadata?.name ?? '', namespace: obj.metadata?.namespace ?? '' },
    } as KubernetesObject & { metadata: { name: string; namespace: string } });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function applyObject(kube: Kube, obj: KubernetesObject): Promise<AppliedObject> {
  const before = await call(kube, `read ${describeObject(obj)}`, () => readOrUndefined(kube, obj));
  const after = await call(kube, `apply ${describeObject(obj)}`, () =>
    kube.objects.patch(obj, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply),
  );
  const action: ApplyAction = !before
    ? 'created'
    : before.metadata?.resourceVersion === after.metadata?.resourceVersion
      ? 'unchanged'
      : 'configured';
  const out: AppliedObject = { kind: obj.kind ?? '', name: obj.metadata?.name ?? '', action };
  if (obj.metadata?.namespace) out.namespace = obj.metadata.namespace;
  return out;
}

export async function waitCrdEstablished(kube: Kube, name: string, opts: { timeoutMs: number; clock?: Clock }): Promise<void> {
  await pollUntil(
    async () => {
      const crd: V1CustomResourceDefinition = await call(kube, `read CRD ${name}`, () => kube.apiext.readCustomResourceDefinition({ name }));
      const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      return { done: !!established, state: 'not Established' };
    },
    { what: `CRD ${name} to be established`, timeoutMs: opts.timeoutMs, intervalMs: 250, ...(opts.clock ? { clock: opts.clock } : {}) },
  );
}

export interface ApplyAllOptions {
  onApplied?: (o: AppliedObject) => void;
  timeoutMs?: number;
}

export async function applyAll(kube: Kube, objects: readonly KubernetesObject[], opts: ApplyAllOptions = {}): Promise<AppliedObject[]> {
  const results: AppliedObject[] = [];
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  const rest = objects.filter((o) => o.kind !== 'CustomResourceDefinition');
  for (const crd of crds) {
    const r = await applyObject(kube, crd);
    results.push(r);
    opts.onApplied?.(r);
  }
  for (const crd of crds) await waitCrdEstablished(kube, crd.metadata?.name ?? '', { timeoutMs: opts.timeoutMs ?? 60_000 });
  for (const obj of rest) {
    const r = await applyObject(kube, obj);
    results.push(r);
    opts.onApplied?.(r);
  }
  return results;
}
