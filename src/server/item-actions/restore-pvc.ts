/**
 * PersistentVolumeClaims, as Velero's PVC action: the annotations recording a finished binding, the provisioner and
 * Velero's snapshot bookkeeping describe the old cluster and are dropped; the node a volume was provisioned for
 * (`volume.kubernetes.io/selected-node`) is mapped to another node by the `velero.io/change-pvc-node-selector`
 * ConfigMap (`<old node>: <new node>`), else dropped, so the claim is not pinned to a node that may not exist.
 */
import { Annotations } from '../../api/index.js';
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

export const SELECTED_NODE = Annotations.SelectedNode;
export const CHANGE_PVC_NODE_SELECTOR = 'velero.io/change-pvc-node-selector';

export const PVC_BINDING_ANNOTATIONS: readonly string[] = [
  'pv.kubernetes.io/bind-completed',
  'pv.kubernetes.io/bound-by-controller',
  'volume.kubernetes.io/storage-provisioner',
  'volume.beta.kubernetes.io/storage-provisioner',
  'velero.io/volume-snapshot-name',
  'velero.io/data-upload-name',
];

/** The claim without the old cluster's annotations; its selected node mapped (`nodeMapping`) or dropped. */
export function cleanPvc(item: UnstructuredObject, nodeMapping: Record<string, string> = {}): UnstructuredObject {
  const pvc = structuredClone(item);
  const ann = pvc.metadata.annotations;
  if (ann) {
    for (const k of PVC_BINDING_ANNOTATIONS) delete ann[k];
    const node = ann[SELECTED_NODE];
    const mapped = node ? nodeMapping[node] : undefined;
    if (mapped) ann[SELECTED_NODE] = mapped;
    else delete ann[SELECTED_NODE];
    if (Object.keys(ann).length === 0) delete pvc.metadata.annotations;
  }
  return pvc;
}

export const pvcRestoreAction: RestoreItemAction = {
  name: 'velero.io/pvc',
  appliesTo: () => ({ includedResources: ['persistentvolumeclaims'] }),
  async execute(item, ctx) {
    const node = item.metadata.annotations?.[SELECTED_NODE];
    const mapping = node ? ((await ctx.pluginConfig?.(CHANGE_PVC_NODE_SELECTOR)) ?? {}) : {};
    const mapped = node ? mapping[node] : undefined;
    if (node && mapped) {
      const exists = await ctx.kube.core.readNode({ name: mapped }).then(
        () => true,
        () => false,
      );
      if (!exists) ctx.log.warn(`Selected-node's mapped node doesn't exist: source: ${node}, dest: ${mapped}. Please check the ConfigMap with label ${CHANGE_PVC_NODE_SELECTOR}.`);
      ctx.log.info(`Updating selected-node of claim ${item.metadata.namespace ?? ''}/${item.metadata.name} to ${mapped} from ${node}`);
    }
    return { item: cleanPvc(item, mapping) };
  },
};
