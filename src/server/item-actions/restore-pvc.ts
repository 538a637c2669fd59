/**
 * PersistentVolumeClaims: the annotations recording a finished binding and the node a volume was provisioned for
 * describe the old cluster; kept, they would stop the claim from binding or pin it to a node that may not exist.
 */
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

export const PVC_BINDING_ANNOTATIONS: readonly string[] = [
  'pv.kubernetes.io/bind-completed',
  'pv.kubernetes.io/bound-by-controller',
  'volume.kubernetes.io/selected-node',
];

export function cleanPvc(item: UnstructuredObject): UnstructuredObject {
  const pvc = structuredClone(item);
  const ann = pvc.metadata.annotations;
  if (ann) {
    for (const k of PVC_BINDING_ANNOTATIONS) delete ann[k];
    if (Object.keys(ann).length === 0) delete pvc.metadata.annotations;
  }
  return pvc;
}

export const pvcRestoreAction: RestoreItemAction = {
  name: 'velero.io/pvc',
  appliesTo: () => ({ includedResources: ['persistentvolumeclaims'] }),
  execute: async (item) => ({ item: cleanPvc(item) }),
};
