/**
 * PersistentVolumes restored as they were: the claim reference keeps name and (mapped) namespace but loses the old
 * claim's UID and version, so the restored claim binds to it again.
 */
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

interface ClaimRef {
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

export function cleanPv(item: UnstructuredObject, namespaceMapping: Record<string, string>): UnstructuredObject {
  const pv = structuredClone(item);
  const spec = (pv.spec ?? {}) as { claimRef?: ClaimRef };
  if (spec.claimRef) {
    delete spec.claimRef.uid;
    delete spec.claimRef.resourceVersion;
    const ns = spec.claimRef.namespace;
    if (ns && namespaceMapping[ns]) spec.claimRef.namespace = namespaceMapping[ns];
  }
  const ann = pv.metadata.annotations;
  if (ann) {
    delete ann['pv.kubernetes.io/bound-by-controller'];
    if (Object.keys(ann).length === 0) delete pv.metadata.annotations;
  }
  return pv;
}

export const pvRestoreAction: RestoreItemAction = {
  name: 'cairn.io/pv-claim-ref',
  appliesTo: () => ({ includedResources: ['persistentvolumes'] }),
  execute: async (item, ctx) => ({ item: cleanPv(item, ctx.restore.spec.namespaceMapping ?? {}) }),
};
