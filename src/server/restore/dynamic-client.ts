/**
 * A client for objects of any kind, sent and received as plain JSON. The restore uses it instead of client-node's
 * KubernetesObjectApi because that one re-serialises objects through its typed models, which drops fields it does
 * not know (custom resources, newer API fields) — a restore must write back exactly what was backed up.
 * Discovery results are cached per apiVersion and refreshed once on a miss (a CRD restored a moment ago).
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import type { Kube } from '../../kube/client.js';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export const isApiNotFound = (err: unknown): boolean => err instanceof ApiError && err.code === 404;
export const isApiAlreadyExists = (err: unknown): boolean => err instanceof ApiError && err.code === 409 && err.reason === 'AlreadyExists';

export interface ResourceInfo {
  /** Plural resource name, e.g. `deployments`. */
  resource: string;
  namespaced: boolean;
}

interface ApiResourceList {
  resources?: { name: string; kind: string; namespaced: boolean }[];
}

/** What the restore needs from the API server; DynamicClient implements it, unit tests fake it. */
export interface ObjectClient {
  get(obj: ObjectRef): Promise<UnstructuredObject | undefined>;
  create(obj: UnstructuredObject): Promise<UnstructuredObject>;
  mergePatch(obj: ObjectRef, patch: object): Promise<UnstructuredObject>;
  replaceStatus(obj: UnstructuredObject): Promise<UnstructuredObject>;
}

export class DynamicClient implements ObjectClient {
  private readonly discovery = new Map<string, ApiResourceList>();

  constructor(private readonly kube: Kube) {}

  /** The resource of a kind, or undefined when the API server does not serve it. */
  async resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    for (const refresh of [false, true]) {
      if (refresh || !this.discovery.has(apiVersion)) {
        try {
          this.discovery.set(apiVersion, (await this.request('GET', versionPath(apiVersion))) as ApiResourceList);
        } catch (err) {
          if (isApiNotFound(err)) {
            this.discovery.delete(apiVersion);
            continue;
          }
          throw err;
        }
      }
      const found = this.discovery.get(apiVersion)?.resources?.find((r) => r.kind === kind && !r.name.includes('/'));
      if (found) return { resource: found.name, namespaced: found.namespaced };
    }
    return undefined;
  }

  /**
   * One object by name, read with a list filtered on `metadata.name`: restore then needs `list` on the resources it
   * reads (which never reaches a sub-resource), not `get` (which on `*` would include pods/log and nodes/proxy).
   */
  async get(obj: ObjectRef): Promise<UnstructuredObject | undefined> {
    const path = `${await this.objectPath(obj, false)}?fieldSelector=${encodeURIComponent(`metadata.name=${obj.name}`)}`;
    let list: { items?: UnstructuredObject[] } | undefined;
    try {
      list = (await this.request('GET', path)) as { items?: UnstructuredObject[] } | undefined;
    } catch (err) {
      if (isApiNotFound(err)) return undefined;
      throw err;
    }
    const found = list?.items?.[0];
    // List items carry no apiVersion and kind: put back those of the object asked for.
    return found ? { ...found, apiVersion: obj.apiVersion, kind: obj.kind } : undefined;
  }

  async create(obj: UnstructuredObject): Promise<UnstructuredObject> {
    return (await this.request('POST', await this.objectPath(ref(obj), false), obj)) as UnstructuredObject;
  }

  /** RFC 7386 JSON merge patch. */
  async mergePatch(obj: ObjectRef, patch: object): Promise<UnstructuredObject> {
    return (await this.request('PATCH', await this.objectPath(obj, true), patch, 'application/merge-patch+json')) as UnstructuredObject;
  }

  /** Replaces the status of an object that was just created (`spec.restoreStatus`). */
  async replaceStatus(obj: UnstructuredObject): Promise<UnstructuredObject> {
    return (await this.request('PUT', `${await this.objectPath(ref(obj), true)}/status`, obj)) as UnstructuredObject;
  }

  private async objectPath(obj: ObjectRef, withName: boolean): Promise<string> {
    const info = await this.resourceFor(obj.apiVersion, obj.kind);
    if (!info) throw new ApiError(404, 'NotFound', `the server does not serve ${obj.apiVersion} ${obj.kind}`);
    const ns = info.namespaced ? `/namespaces/${encodeURIComponent(obj.namespace ?? 'default')}` : '';
    return `${versionPath(obj.apiVersion)}${ns}/${info.resource}${withName ? `/${encodeURIComponent(obj.name)}` : ''}`;
  }

  private async request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<unknown> {
    const cluster = this.kube.config.getCurrentCluster();
    if (!cluster) throw new Error('no current cluster in the kube configuration');
    const url = new URL(cluster.server.replace(/\/$/, '') + path);
    const opts: RequestOptions = { method, headers: { Accept: 'application/json' } };
    await this.kube.config.applyToHTTPSOptions(opts);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    if (payload) Object.assign(opts.headers ?? {}, { 'Content-Type': contentType, 'Content-Length': String(payload.length) });
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = send(url, opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.end(payload);
    });
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (status >= 200 && status < 300) return parsed;
    const st = (parsed ?? {}) as { message?: string; reason?: string };
    // The API server's message names the object and the rule it broke; it never carries object data.
    throw new ApiError(status, st.reason ?? '', st.message ?? `HTTP ${status} from ${method} ${path}`);
  }
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name: string;
}

export function ref(obj: UnstructuredObject): ObjectRef {
  return { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name };
}

function versionPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}
