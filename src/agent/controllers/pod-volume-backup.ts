/**
 * The node-agent's PodVolumeBackup controller (docs/node-agent.md): only the node-agent of spec.node claims
 * a PVB; completion records the snapshot ID and the in-pod path, or Velero's message for an empty volume.
 */
import { parsePodVolumeBackup, type PodVolumeBackup } from '../../api/index.js';
import { backupResultStatus } from '../microservice/protocol.js';
import { createDataPathController, type DataPathController, type DataPathKindSpec } from './data-path-controller.js';
import { podVolumeSpecParts, type PodVolumeControllerContext } from './pod-volume-common.js';

export const EMPTY_VOLUME_MESSAGE = 'volume was empty so no snapshot was taken';

export function podVolumeBackupSpec(ctx: PodVolumeControllerContext): DataPathKindSpec<PodVolumeBackup> {
  return {
    ...podVolumeSpecParts(ctx, 'PodVolumeBackup', parsePodVolumeBackup),
    processingNode: (pvb) => pvb.spec.node,
    // Accepted even when the workload pod is gone: the expose step then fails it with a clear message instead of
    // leaving it New forever.
    acceptDecision: (pvb) => Promise.resolve(pvb.spec.node === ctx.nodeName ? { accept: true } : { accept: false }),
    onCompleted(pvb, result) {
      pvb.status = { ...(pvb.status ?? {}), ...backupResultStatus(result, EMPTY_VOLUME_MESSAGE) };
    },
    failurePrefix: 'data path backup failed',
  };
}

export function createPodVolumeBackupController(ctx: PodVolumeControllerContext): DataPathController<PodVolumeBackup> {
  return createDataPathController(podVolumeBackupSpec(ctx), ctx);
}
