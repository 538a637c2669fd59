/**
 * The node-agent's PodVolumeBackup controller (velero-interfaces.md §4.2): only the node-agent of spec.node claims
 * a PVB; completion records the snapshot ID and the in-pod path, or Velero's message for an empty volume.
 */
import { Kinds, parsePodVolumeBackup, type PodVolumeBackup } from '../../api/index.js';
import { isNotFound } from '../../kube/errors.js';
import { customClient } from '../../kube/custom.js';
import type { BackupResultMessage } from '../microservice/protocol.js';
import { createDataPathController, type DataPathController, type DataPathControllerContext, type DataPathKindSpec } from './data-path-controller.js';

export const EMPTY_VOLUME_MESSAGE = 'volume was empty so no snapshot was taken';

export function podVolumeBackupSpec(ctx: DataPathControllerContext): DataPathKindSpec<PodVolumeBackup> {
  return {
    kind: 'PodVolumeBackup',
    short: 'PVB',
    resource: Kinds.PodVolumeBackup,
    client: customClient<PodVolumeBackup>(ctx.kube, Kinds.PodVolumeBackup, parsePodVolumeBackup),
    processingNode: (pvb) => pvb.spec.node,
    async acceptDecision(pvb) {
      if (pvb.spec.node !== ctx.nodeName) return { accept: false };
      const ns = pvb.spec.pod.namespace ?? '';
      const name = pvb.spec.pod.name ?? '';
      try {
        const pod = await ctx.kube.core.readNamespacedPod({ namespace: ns, name });
        if (pvb.spec.pod.uid && pod.metadata?.uid !== pvb.spec.pod.uid) return { accept: true };
        return { accept: true, targetPod: pod };
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // Accepted anyway: the expose step then fails it with a clear message instead of leaving it New forever.
        return { accept: true };
      }
    },
    onCompleted(pvb, result) {
      const r = result as BackupResultMessage;
      pvb.status = {
        ...(pvb.status ?? {}),
        path: r.source?.byPath ?? '',
        snapshotID: r.snapshotID ?? '',
        ...(r.emptySnapshot ? { message: EMPTY_VOLUME_MESSAGE } : {}),
      };
    },
    failurePrefix: 'data path backup failed',
  };
}

export function createPodVolumeBackupController(ctx: DataPathControllerContext): DataPathController<PodVolumeBackup> {
  return createDataPathController(podVolumeBackupSpec(ctx), ctx);
}
