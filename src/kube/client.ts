/**
 * One place that makes API clients from a KubeConfig. Commands and controllers take a `Kube` and never build
 * clients themselves, so tests can point everything at the local cluster.
 */
import { backoffMs } from '../base/backoff.js';
import { realClock, type Clock } from '../base/clock.js';
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

const TRANSIENT_STATUS = new Set([429, 500, 502, 503, 504]);

/**
 * Whether an API failure is worth retrying: throttling, an API server busy (re)initialising, a reset connection;
 * also when `call` wrapped such a failure into a CairnError (its cause).
 */
export function isTransient(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number') return TRANSIENT_STATUS.has(code);
  if (code === 'ECONNRESET' || code === 'ECONNREFUSED') return true;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== err && isTransient(cause);
}

/** Retries an idempotent call on transient failures with exponential back-off (about 30 s in all by default). */
export async function retryTransient<T>(fn: () => Promise<T>, opts: { attempts?: number; baseMs?: number; clock?: Clock; random?: () => number } = {}): Promise<T> {
  const attempts = opts.attempts ?? 8;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts || !isTransient(err)) throw err;
      await (opts.clock ?? realClock).sleep(backoffMs(i, { baseMs: opts.baseMs ?? 250, maxMs: 8000, ...(opts.random ? { random: opts.random } : {}) }));
    }
  }
}
