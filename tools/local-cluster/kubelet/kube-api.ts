/**
 * The few API calls the local kubelet makes, in one place: reads for volumes and env, pod status patches,
 * final pod deletion, events. 404s become `undefined`; everything else throws.
 */
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import type { EnvSourceLookup } from './env.js';
import type { TokenRequest, VolumeApi } from './volumes.js';

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiException && err.code === 404;
}

export function isConflict(err: unknown): boolean {
  return err instanceof ApiException && err.code === 409;
}

/** One short line for logs: the API's own message for API errors (client-node's message holds whole bodies). */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    let message: string | undefined;
    try {
      const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: unknown } | undefined;
      if (typeof parsed?.message === 'string') message = parsed.message;
    } catch {
      // not JSON
    }
    return `HTTP ${err.code}: ${message ?? 'no message'}`;
  }
  return err instanceof Error ? err.message : String(err);
}

async function orUndefined<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function decodeAll(data: Record<string, string> | undefined, base64: boolean): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(data ?? {})) out[k] = Buffer.from(v, base64 ? 'base64' : 'utf8');
  return out;
}

export class KubeletApi implements VolumeApi {
  readonly core: CoreV1Api;
  readonly coordination: CoordinationV1Api;

  constructor(readonly config: KubeConfig) {
    this.core = config.makeApiClient(CoreV1Api);
    this.coordination = config.makeApiClient(CoordinationV1Api);
  }

  async secret(namespace: string, name: string): Promise<Record<string, Buffer> | undefined> {
    const s = await orUndefined(this.core.readNamespacedSecret({ name, namespace }));
    if (!s) return undefined;
    // The client decodes nothing: `data` is base64 on the wire, `stringData` never comes back.
    return decodeAll(s.data, true);
  }

  async configMap(namespace: string, name: string): Promise<Record<string, Buffer> | undefined> {
    const cm = await orUndefined(this.core.readNamespacedConfigMap({ name, namespace }));
    if (!cm) return undefined;
    return { ...decodeAll(cm.data, false), ...decodeAll(cm.binaryData, true) };
  }

  pvc(namespace: string, name: string) {
    return orUndefined(this.core.readNamespacedPersistentVolumeClaim({ name, namespace }));
  }

  pv(name: string) {
    return orUndefined(this.core.readPersistentVolume({ name }));
  }

  async serviceAccountToken(req: TokenRequest): Promise<string> {
    const res = await this.core.createNamespacedServiceAccountToken({
      name: req.serviceAccount,
      namespace: req.namespace,
      body: {
        spec: {
          audiences: req.audience ? [req.audience] : [],
          expirationSeconds: req.expirationSeconds,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: req.podName, uid: req.podUid },
        },
      },
    });
    const token = res.status?.token;
    if (!token) throw new Error(`no token returned for serviceaccount ${req.namespace}/${req.serviceAccount}`);
    return token;
  }

  /** Env lookups want strings. */
  envLookup(): EnvSourceLookup {
    const toStrings = (m: Record<string, Buffer> | undefined) =>
      m ? Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v.toString('utf8')])) : undefined;
    return {
      secret: async (ns, name) => toStrings(await this.secret(ns, name)),
      configMap: async (ns, name) => toStrings(await this.configMap(ns, name)),
    };
  }

  getPod(namespace: string, name: string): Promise<V1Pod | undefined> {
    return orUndefined(this.core.readNamespacedPod({ name, namespace }));
  }

  async patchPodStatus(namespace: string, name: string, status: object): Promise<void> {
    await this.core.patchNamespacedPodStatus({ name, namespace, body: { status } }, mergePatch);
  }

  /** The kubelet's last word on a pod: delete with grace 0, only if it is still the same pod. */
  async finalDelete(namespace: string, name: string, uid: string): Promise<void> {
    await orUndefined(
      this.core.deleteNamespacedPod({
        name,
        namespace,
        gracePeriodSeconds: 0,
        body: { gracePeriodSeconds: 0, preconditions: { uid } },
      }),
    );
  }
}
