/**
 * GET /download/<downloadrequest-name> on the server's HTTP port: streams the file a DownloadRequest names, for
 * clients that cannot reach the storage endpoint (pre-signed URLs point at it). The CLI reaches this through the API
 * server's pod proxy, so the API server authenticates the caller (`get pods/proxy` in the install namespace) and the
 * name of an existing, Processed, unexpired request in that namespace is the capability. The body is the stored
 * object as is (still gzip-compressed), exactly what the pre-signed URL would return.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { DownloadRequestPhase, Kinds, isValidName, parseDownloadRequest, type DownloadRequest } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { isNotFound as isObjectNotFound } from '../../plugins/object-store/index.js';
import type { LocationResolver } from '../../storage/locations.js';
import { resolveDownloadTarget } from './target.js';

export const DOWNLOAD_PATH_PREFIX = '/download/';

export interface DownloadEndpointOptions {
  kube: Kube;
  namespace: string;
  resolver: LocationResolver;
  logger: Logger;
  now: () => Date;
}

/** Why a request may not be served (status code and message), or undefined when it may. */
export function downloadRefusal(request: DownloadRequest | undefined, now: Date): { status: number; message: string } | undefined {
  if (!request) return { status: 404, message: 'no such download request' };
  if (request.status?.phase !== DownloadRequestPhase.Processed) return { status: 409, message: 'download request not processed yet' };
  if (!request.status.downloadURL) return { status: 404, message: 'the requested file does not exist in storage' };
  const expiration = request.status.expiration ? Date.parse(request.status.expiration) : NaN;
  if (!(expiration > now.getTime())) return { status: 410, message: 'download request expired' };
  return undefined;
}

function reply(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${message}\n`);
}

export function downloadHandler(opts: DownloadEndpointOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const requests = customClient<DownloadRequest>(opts.kube, Kinds.DownloadRequest, parseDownloadRequest);
  const log = opts.logger;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'only GET');
    const name = decodeURIComponent((req.url ?? '').slice(DOWNLOAD_PATH_PREFIX.length).split('?')[0] ?? '');
    if (!isValidName(name)) return reply(res, 400, 'invalid download request name');
    const request = await requests.get(opts.namespace, name);
    const refusal = downloadRefusal(request, opts.now());
    if (refusal || !request) return reply(res, refusal?.status ?? 404, refusal?.message ?? 'no such download request');
    const target = await resolveDownloadTarget({ kube: opts.kube, namespace: opts.namespace, resolver: opts.resolver, target: request.spec.target });
    if (!target.found) return reply(res, 404, target.reason);
    const info = await target.store.objects.head(target.key);
    if (!info) return reply(res, 404, 'the requested file does not exist in storage');
    // A plugin's store cannot tell the size (-1): the body is then sent chunked.
    res.writeHead(200, { 'content-type': 'application/octet-stream', ...(info.size >= 0 ? { 'content-length': String(info.size) } : {}), 'cache-control': 'no-store' });
    if (req.method === 'HEAD') return void res.end();
    const body = await target.store.objects.getStream(target.key);
    await pipeline(body, res);
    log.debug({ request: name, kind: request.spec.target.kind, target: request.spec.target.name, bytes: info.size }, 'download served');
  }

  return (req, res) => {
    serve(req, res).catch((err: unknown) => {
      const notFound = isObjectNotFound(err);
      log.warn({ err: (err as Error)?.message?.split('\n')[0] }, 'download failed');
      reply(res, notFound ? 404 : 502, notFound ? 'the requested file does not exist in storage' : 'could not read the file from storage');
    });
  };
}
