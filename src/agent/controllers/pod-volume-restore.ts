/**
 * The node-agent's PodVolumeRestore controller (docs/node-agent.md): a PVR is claimed by the node the
 * restored pod runs on, and only once the pod's `restore-wait` init container is Running (its volumes are then set
 * up on the node and the workload waits for the done marker). The claim records status.node.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { parsePodVolumeRestore, type PodVolumeRestore } from '../../api/index.js';
import { createDataPathController, type DataPathController, type DataPathKindSpec } from './data-path-controller.js';
import { podVolumeSpecParts, type PodVolumeControllerContext } from './pod-volume-common.js';

export const RESTORE_WAIT_CONTAINER = 'restore-wait';

/** Whether the pod's restore-wait init container is running (the moment a PVR may start). */
export function isRestoreWaitRunning(pod: V1Pod): boolean {
  return pod.status?.initContainerStatuses?.some((s) => s.name === RESTORE_WAIT_CONTAINER && s.state?.running !== undefined) === true;
}

export interface PodVolumeRestoreContext extends PodVolumeControllerContext {
  /** Pods on this node, as last seen (a watch filtered by spec.nodeName). */
  nodePod: (namespace: string, name: string) => V1Pod | undefined;
}

export function podVolumeRestoreSpec(ctx: PodVolumeRestoreContext): DataPathKindSpec<PodVolumeRestore> {
  return {
    ...podVolumeSpecParts(ctx, 'PodVolumeRestore', parsePodVolumeRestore),
    processingNode: (pvr) => pvr.status?.node,
    acceptDecision(pvr) {
      const pod = ctx.nodePod(pvr.spec.pod.namespace ?? '', pvr.spec.pod.name ?? '');
      if (!pod || (pvr.spec.pod.uid && pod.metadata?.uid !== pvr.spec.pod.uid)) return Promise.resolve({ accept: false });
      if (!isRestoreWaitRunning(pod)) return Promise.resolve({ accept: false, why: 'restore-wait init container is not running yet' });
      const names = (pod.spec?.initContainers ?? []).map((c) => c.name);
      if (names.indexOf(RESTORE_WAIT_CONTAINER) > 0) ctx.logger.warn({ PVR: pvr.metadata?.name, initContainers: names }, 'init containers run before restore-wait');
      return Promise.resolve({ accept: true });
    },
    onAccepted(pvr, node) {
      pvr.status = { ...(pvr.status ?? {}), node };
    },
    onCompleted() {
      // A restore records no path or snapshot: phase, timestamps and progress say it all.
    },
    failurePrefix: 'data path restore failed',
  };
}

export function createPodVolumeRestoreController(ctx: PodVolumeRestoreContext): DataPathController<PodVolumeRestore> {
  return createDataPathController(podVolumeRestoreSpec(ctx), ctx);
}
