/**
 * The backup/restore pod of a DataUpload/DataDownload (docs/data-mover.md), a pure function: name = CR name, owned
 * by and labelled with the CR, `cairn data-mover backup|restore` in one container named after the CR's UID, the
 * exposed PVC mounted at /<uid> (Filesystem) or attached there as a device (Block). It is placed by a required node
 * affinity on the claiming node rather than nodeName, so the scheduler runs and a WaitForFirstConsumer PVC gets
 * provisioned; a DataDownload restored on its workload's node is placed by nodeName instead, its PVC naming that node
 * (`pinned`). Everything else is inherited from the node-agent pod (hosting-pod.ts).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VolumeMode } from '../microservice/protocol.js';
import type { NodeAgentConfig } from '../config.js';
import { dataMoverPodShell } from './hosting-pod.js';

export interface DataMoverPodInput {
  kind: 'DataUpload' | 'DataDownload';
  /** The DU/DD: name, uid (namespace = install namespace). */
  owner: { name: string; namespace: string; uid: string };
  /** The exposed PVC in the install namespace. */
  claimName: string;
  volumeMode: VolumeMode;
  /** The node that claimed the CR. */
  nodeName: string;
  nodeAgentPod: V1Pod;
  resourceTimeoutMs: number;
  logLevel: string;
  config: NodeAgentConfig;
  /** The exposed PVC is read-only (a backup PVC made ReadOnlyMany): the pod's volume says so too. */
  readOnlyClaim?: boolean;
  /** SELinux type of the pod (`spc_t`: a read-only backup volume is not relabeled). */
  seLinuxType?: string;
  /**
   * Placed by nodeName, past the scheduler (a DataDownload on the node its target's workload was scheduled to, as
   * Velero places it): a taint of that node the workload tolerates does not keep the pod off it. Its PVC names the node
   * itself (`volume.kubernetes.io/selected-node`), since no scheduler does.
   */
  pinned?: boolean;
}

/** Required affinity to one node by name (what DaemonSets use: independent of the node's labels). */
export function requiredNodeAffinity(nodeName: string): NonNullable<V1Pod['spec']>['affinity'] {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }] },
    },
  };
}

export function dataMoverPod(input: DataMoverPodInput): V1Pod {
  return dataMoverPodShell({
    ...input,
    kindArgs: [`--volume-mode=${input.volumeMode}`],
    volume: { name: input.owner.uid, persistentVolumeClaim: { claimName: input.claimName, ...(input.readOnlyClaim ? { readOnly: true } : {}) } },
    // A backup only reads the volume.
    attach: input.volumeMode === 'Block' ? { device: {} } : { mount: input.kind === 'DataUpload' ? { readOnly: true } : {} },
    placement: input.pinned ? { nodeName: input.nodeName } : { affinity: requiredNodeAffinity(input.nodeName) },
    ...(input.seLinuxType ? { seLinuxType: input.seLinuxType } : {}),
  });
}
