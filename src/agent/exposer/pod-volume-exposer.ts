/**
 * The pod-volume exposer: finds the host path of a workload pod's volume on this node and starts the data-mover
 * pod mounting only that path; `getExposed` reads the pod back, `cleanUp` removes it. Creating is idempotent (a pod
 * of the same name owned by the same CR counts as exposed), so a node-agent restarted mid-expose just retries.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { call } from '../../kube/client.js';
import { isAlreadyExists, isNotFound, undefinedIfNotFound } from '../../kube/errors.js';
import { HOST_PODS_MOUNT, findVolumePath, hostPodsHostDir, toHostPath, volumeDirectory } from './host-path.js';
import { hostingPod, type HostingPodInput } from './hosting-pod.js';
import type { ExposerOptions } from './exposed-objects.js';

export interface PodVolumeExposerOptions extends ExposerOptions {
  /** Where this process sees the kubelet's pods directory (default /host_pods). */
  hostPodsDir?: string;
}

export interface ExposeRequest {
  kind: HostingPodInput['kind'];
  owner: { name: string; uid: string };
  /** The workload pod (as read from the API) and its volume. */
  targetPod: V1Pod;
  volume: string;
}

export interface PodVolumeExposer {
  /** Creates the hosting pod; returns the host path it mounts. */
  expose(req: ExposeRequest): Promise<{ hostPath: string }>;
  getExposed(name: string): Promise<V1Pod | undefined>;
  cleanUp(name: string): Promise<void>;
}

export function createPodVolumeExposer(opts: PodVolumeExposerOptions): PodVolumeExposer {
  const hostPodsDir = opts.hostPodsDir ?? HOST_PODS_MOUNT;
  const hostDir = hostPodsHostDir(opts.nodeAgentPod);
  return {
    async expose(req) {
      const podUID = req.targetPod.metadata?.uid ?? '';
      const dir = await volumeDirectory({
        pod: req.targetPod,
        volumeName: req.volume,
        getPersistentVolume: async (namespace, claimName) => {
          const pvc = await call(opts.kube, `get PVC ${namespace}/${claimName}`, () => opts.kube.core.readNamespacedPersistentVolumeClaim({ namespace, name: claimName }));
          const pvName = pvc.spec?.volumeName ?? '';
          if (!pvName) return { pvName };
          const pv = await call(opts.kube, `get PV ${pvName}`, () => opts.kube.core.readPersistentVolume({ name: pvName }));
          return { pvName, pv };
        },
      });
      const seen = findVolumePath({ hostPodsDir, podUID, volume: dir });
      const hostPath = toHostPath(seen, { hostPodsDir, hostPodsHostDir: hostDir });
      const pod = hostingPod({
        kind: req.kind,
        owner: { ...req.owner, namespace: opts.namespace },
        nodeName: opts.nodeName,
        hostPath,
        nodeAgentPod: opts.nodeAgentPod,
        resourceTimeoutMs: opts.resourceTimeoutMs,
        logLevel: opts.logLevel,
        config: opts.config,
      });
      try {
        await opts.kube.core.createNamespacedPod({ namespace: opts.namespace, body: pod });
        opts.logger.info({ [req.kind]: req.owner.name, pod: req.owner.name, hostPath }, 'hosting pod created');
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const existing = await this.getExposed(req.owner.name);
        if (existing?.metadata?.ownerReferences?.some((r) => r.uid === req.owner.uid) !== true) {
          throw new Error(`pod ${opts.namespace}/${req.owner.name} already exists and is not owned by ${req.kind} ${req.owner.name}`, { cause: err });
        }
      }
      return { hostPath };
    },
    getExposed: (name) => undefinedIfNotFound(() => opts.kube.core.readNamespacedPod({ namespace: opts.namespace, name })),
    async cleanUp(name) {
      try {
        await opts.kube.core.deleteNamespacedPod({ namespace: opts.namespace, name, gracePeriodSeconds: 0 });
        opts.logger.debug({ pod: name }, 'hosting pod deleted');
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
  };
}
