/**
 * One place that makes API clients from a KubeConfig. Commands and controllers take a `Kube` and never build
 * clients themselves, so tests can point everything at the local cluster.
 */
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  VersionApi,
} from '@kubernetes/client-node';
import { kubeError } from './errors.js';
import { loadKubeConfig, type ClusterOptions } from './config.js';

export interface Kube {
  readonly config: KubeConfig;
  readonly server: string;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly rbac: RbacAuthorizationV1Api;
  readonly apiext: ApiextensionsV1Api;
  readonly custom: CustomObjectsApi;
  readonly objects: KubernetesObjectApi;
  readonly version: VersionApi;
}

export function kubeFromConfig(config: KubeConfig): Kube {
  return {
    config,
    server: config.getCurrentCluster()?.server ?? '<unknown>',
    core: config.makeApiClient(CoreV1Api),
    apps: config.makeApiClient(AppsV1Api),
    rbac: config.makeApiClient(RbacAuthorizationV1Api),
    apiext: config.makeApiClient(ApiextensionsV1Api),
    custom: config.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(config),
    version: config.makeApiClient(VersionApi),
  };
}

export function connect(opts: ClusterOptions): Kube {
  return kubeFromConfig(loadKubeConfig(opts));
}

/** Runs one API call and maps its failure to a clear, typed error. */
export async function call<T>(kube: Kube, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw kubeError(err, what, kube.server);
  }
}

/** Fails fast with a clear error when the cluster cannot be reached. */
export async function checkReachable(kube: Kube): Promise<{ gitVersion: string }> {
  const info = await call(kube, 'get server version', () => kube.version.getCode());
  return { gitVersion: info.gitVersion };
}
