/**
 * The cluster as `debug` reads it: velero.io objects, the server's and node agent's workloads, their ConfigMaps, pods
 * and logs, the versions, and the named backup's or restore's description and log (through the same DownloadRequest
 * path as `backup logs`). It reads no Secret.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Kube } from '../../kube/client.js';
import { call, checkReachable } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import type { Logger } from '../../base/logger.js';
import { fetchOperationLog } from '../logs.js';
import { serverVersion } from '../server-version.js';
import { describeBackupText, describeRestoreText } from '../describe/gather.js';
import type { DebugSource } from './collect.js';

export interface KubeSourceOptions {
  namespace: string;
  /** Per read through the cluster (a stored file, the server's answer). */
  timeoutMs: number;
  logger?: Logger | undefined;
}

const orNull = async <T>(fn: () => Promise<T>): Promise<T | null> => {
  try {
    return await fn();
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
};

export function kubeDebugSource(kube: Kube, opts: KubeSourceOptions): DebugSource {
  const namespace = opts.namespace;
  const logger = opts.logger ? { logger: opts.logger } : {};
  return {
    clusterVersion: async () => (await checkReachable(kube)).gitVersion,
    serverVersion: () => serverVersion(kube, { namespace, timeoutMs: Math.min(opts.timeoutMs, 10_000) }),
    listVeleroObjects: async ({ plural, version }) => {
      const list = (await call(kube, `list ${plural}.velero.io in ${namespace}`, () =>
        kube.custom.listNamespacedCustomObject({ group: 'velero.io', version, namespace, plural }),
      )) as { items?: KubernetesObject[] };
      return list.items ?? [];
    },
    workload: (kind, name) =>
      call(kube, `read ${kind} ${namespace}/${name}`, () =>
        orNull<KubernetesObject & { spec?: unknown }>(() =>
          kind === 'Deployment' ? kube.apps.readNamespacedDeployment({ namespace, name }) : kube.apps.readNamespacedDaemonSet({ namespace, name }),
        ),
      ),
    configMap: (name) => call(kube, `read ConfigMap ${namespace}/${name}`, () => orNull(() => kube.core.readNamespacedConfigMap({ namespace, name }))),
    pods: async () => (await call(kube, `list pods in ${namespace}`, () => kube.core.listNamespacedPod({ namespace }))).items,
    podLog: (name, container, previous) =>
      call(kube, `read the log of ${namespace}/${name}/${container}`, () => kube.core.readNamespacedPodLog({ namespace, name, container, ...(previous ? { previous } : {}) })),
    describe: (kind, name) =>
      kind === 'backup'
        ? describeBackupText(kube, name, { namespace, timeoutMs: opts.timeoutMs, ...logger })
        : describeRestoreText(kube, name, { namespace, timeoutMs: opts.timeoutMs, ...logger }),
    operationLog: (kind, name) => fetchOperationLog(kube, { kind, namespace, name, timeoutMs: opts.timeoutMs, ...logger }),
  };
}
