/**
 * Reads a file of a backup or restore the way `backup logs`, `describe --details` and `restore logs` need it:
 * create a DownloadRequest, wait until the server processed it, fetch the pre-signed URL, and when that URL cannot
 * be used from here (storage endpoint unreachable, only reachable in-cluster, a file:// location, a refused
 * signature) fetch the same bytes through the API server's pod proxy from the server's /download/ endpoint. A
 * file:// URL whose file is on this machine is read directly when the cluster path fails.
 */
import { randomUUID } from 'node:crypto';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { V1Pod } from '@kubernetes/client-node';
import {
  DownloadRequestPhase,
  Kinds,
  newDownloadRequest,
  parseDownloadRequest,
  type DownloadRequest,
  type DownloadTargetKind,
} from '../../api/index.js';
import { CairnError, NotFoundError } from '../../base/errors.js';
import type { Logger } from '../../base/logger.js';
import { call, type Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { SERVER_HEALTH_PORT, SERVER_NAME } from '../../api/install-names.js';
import { DOWNLOAD_PATH_PREFIX } from './endpoint.js';

export interface FetchDownloadOptions {
  /** The install namespace (where the server and its DownloadRequests live). */
  namespace: string;
  kind: DownloadTargetKind;
  /** Name of the backup or restore. */
  name: string;
  /** Overall deadline (default 60 s). */
  timeoutMs?: number;
  /** Gunzip the content (every kind but BackupContents is stored gzip-compressed). Default false: raw bytes. */
  gunzip?: boolean;
  /** Where to say which path was used (debug) and why the URL was not. */
  logger?: Logger;
  /** How bytes are read from the server pod; default: the API server's pod proxy (`podProxyTransport`). */
  serverTransport?: ServerTransport;
}

/** One GET of `path` (e.g. /download/<request>) on port `port` of the server pod. */
export interface ServerFileRequest {
  namespace: string;
  pod: string;
  port: number;
  path: string;
  timeoutMs: number;
}
export type ServerTransport = (req: ServerFileRequest) => Promise<Buffer>;

/** How long the pre-signed URL gets to answer before the pod proxy is tried. */
export const URL_ATTEMPT_TIMEOUT_MS = 5_000;
const POLL_INTERVAL_MS = 100;

/** Velero's CLI names requests `<target>-<uuid>`; the target part is shortened so the name stays valid. */
export function downloadRequestName(target: string): string {
  return `${target.slice(0, 200).replace(/[-.]+$/, '')}-${randomUUID()}`;
}

/** Whether a download URL can be tried directly from here (http/https); file:// and others go through the proxy. */
export function isFetchableUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/** The server pod to proxy through: a Running, Ready pod of the cairn Deployment, newest first. */
export function pickServerPod(pods: readonly V1Pod[]): { name: string; port: number } | undefined {
  const ready = pods
    .filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp)
    .filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .sort((a, b) => new Date(b.metadata?.creationTimestamp ?? 0).getTime() - new Date(a.metadata?.creationTimestamp ?? 0).getTime());
  const pod = ready[0];
  if (!pod?.metadata?.name) return undefined;
  const port = pod.spec?.containers.flatMap((c) => c.ports ?? []).find((p) => p.name === 'health')?.containerPort ?? SERVER_HEALTH_PORT;
  return { name: pod.metadata.name, port };
}

async function waitProcessed(kube: Kube, namespace: string, name: string, deadline: number): Promise<DownloadRequest> {
  const client = customClient<DownloadRequest>(kube, Kinds.DownloadRequest, parseDownloadRequest);
  for (;;) {
    const current = await client.get(namespace, name);
    if (current?.status?.phase === DownloadRequestPhase.Processed) return current;
    if (Date.now() >= deadline) {
      throw new CairnError(`timed out waiting for the cairn server in namespace ${namespace} to process download request ${name} (is the server running?)`);
    }
    await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS));
  }
}

/** GETs a URL: headers within `ms`, the whole body within `totalMs`; the reason when it cannot be used. */
async function viaUrl(url: string, ms: number, totalMs: number): Promise<{ body?: Buffer; reason?: string }> {
  const abort = new AbortController();
  let timer = setTimeout(() => abort.abort(), ms);
  try {
    const res = await fetch(url, { signal: abort.signal });
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(), Math.max(ms, totalMs));
    if (!res.ok) return { reason: `HTTP ${res.status}` };
    return { body: Buffer.from(await res.arrayBuffer()) };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { reason: abort.signal.aborted ? `no answer within ${Math.round(ms / 1000)}s` : (cause?.code ?? cause?.message ?? (err as Error).message) };
  } finally {
    clearTimeout(timer);
  }
}

/** GET on the API server (authenticated as the kubeconfig's user), returning the body; throws on non-2xx. */
async function apiServerGet(kube: Kube, path: string, ms: number): Promise<Buffer> {
  const server = kube.config.getCurrentCluster()?.server;
  if (!server) throw new CairnError('no cluster in the kubeconfig');
  const url = new URL(server.replace(/\/+$/, '') + path);
  const options: RequestOptions = { method: 'GET', headers: {} };
  await kube.config.applyToHTTPSOptions(options);
  return new Promise<Buffer>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { ...options, timeout: ms }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve(body);
        const text = body.toString('utf8').trim().split('\n')[0]?.slice(0, 300) ?? '';
        if (status === 404) return reject(new NotFoundError(`not found through the cluster: ${text}`));
        if (/address not allowed/.test(text)) {
          // Kubernetes refuses to proxy to loopback and link-local pod addresses (e.g. host-network test clusters).
          return reject(new CairnError('the API server refused to proxy to the cairn server pod (its address is loopback or link-local)'));
        }
        reject(new CairnError(`the cluster answered HTTP ${status}: ${text}`));
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from the API server within ${Math.round(ms / 1000)}s`)));
    req.on('error', reject);
    req.end();
  });
}

/** The default transport: GET through the API server's pod proxy (needs `get pods/proxy` in the namespace). */
export function podProxyTransport(kube: Kube): ServerTransport {
  return (r) => {
    const path = `/api/v1/namespaces/${encodeURIComponent(r.namespace)}/pods/${encodeURIComponent(`${r.pod}:${r.port}`)}/proxy${r.path}`;
    return apiServerGet(kube, path, r.timeoutMs);
  };
}

/** The file from the server's /download/<request> endpoint, through `transport`. */
async function viaServer(kube: Kube, transport: ServerTransport, namespace: string, requestName: string, ms: number): Promise<Buffer> {
  const pods = await call(kube, `list the cairn server pods in ${namespace}`, () => kube.core.listNamespacedPod({ namespace, labelSelector: `deploy=${SERVER_NAME}` }));
  const pod = pickServerPod(pods.items);
  if (!pod) throw new CairnError(`no ready cairn server pod in namespace ${namespace} to stream the file through`);
  return transport({ namespace, pod: pod.name, port: pod.port, path: `${DOWNLOAD_PATH_PREFIX}${encodeURIComponent(requestName)}`, timeoutMs: ms });
}

/**
 * Creates a DownloadRequest for `kind` of backup/restore `name`, waits for the server, and returns the file's bytes
 * (raw as stored, or gunzipped with `gunzip`). Throws NotFoundError when the file does not exist.
 */
export async function fetchDownload(kube: Kube, opts: FetchDownloadOptions): Promise<Buffer> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const remaining = () => Math.max(1_000, deadline - Date.now());
  const requests = customClient<DownloadRequest>(kube, Kinds.DownloadRequest, parseDownloadRequest);
  const name = downloadRequestName(opts.name);
  await requests.create(newDownloadRequest({ namespace: opts.namespace, name, spec: { target: { kind: opts.kind, name: opts.name } } }));
  const processed = await waitProcessed(kube, opts.namespace, name, deadline);
  const url = processed.status?.downloadURL;
  if (!url) throw new NotFoundError(`${opts.kind} of ${opts.name} not found in storage`);

  let body: Buffer | undefined;
  if (isFetchableUrl(url)) {
    const direct = await viaUrl(url, Math.min(URL_ATTEMPT_TIMEOUT_MS, remaining()), remaining());
    body = direct.body;
    if (!body) opts.logger?.debug({ reason: direct.reason }, 'download URL not usable from here; streaming through the cluster');
  }
  if (!body) {
    try {
      body = await viaServer(kube, opts.serverTransport ?? podProxyTransport(kube), opts.namespace, name, remaining());
    } catch (err) {
      // Last resort for file:// locations: the directory may be on this machine (single-node setups, the test bed).
      const local = url.startsWith('file://') ? await readFile(fileURLToPath(url)).catch(() => undefined) : undefined;
      if (!local) throw err;
      opts.logger?.debug({ reason: (err as Error).message }, 'no path through the cluster; read the file:// location on this machine');
      body = local;
    }
  }
  return opts.gunzip ? gunzipSync(body) : body;
}
