/**
 * Processes DownloadRequests (docs/storage-locations.md): New → Processed with a pre-signed `downloadURL`
 * valid 10 minutes and `expiration`; expired requests are deleted. When the file does not exist (or the backup,
 * restore or location is gone) the request is Processed without a URL, which clients read as "not found", as
 * Velero's CLI does.
 *
 * The URL is signed for `config.publicUrl` when the location sets it (as Velero's AWS plugin does), else for the
 * endpoint the server uses. Stores that cannot sign (filesystem) get a `file://` URL, which no client can use
 * directly: the same file is served on the server's HTTP port at /download/<request-name> (./download/endpoint.ts),
 * reached through the API server's pod proxy (./download/client.ts).
 */
import { pathToFileURL } from 'node:url';
import {
  DownloadRequestPhase,
  Kinds,
  parseDownloadRequest,
  type BackupStorageLocation,
  type DownloadRequest,
  statusTime,
} from '../api/index.js';
import { customClient } from '../kube/custom.js';
import { startCustomController, type ObjectKey, type ReconcileResult } from '../kube/controller.js';
import { BackupStore } from '../storage/backup-store.js';
import { openLocationStore } from '../storage/location-store.js';
import { LocationResolver } from '../storage/locations.js';
import { DOWNLOAD_PATH_PREFIX, downloadHandler } from './download/endpoint.js';
import { resolveDownloadTarget } from './download/target.js';
import type { ServerContext, Stoppable } from './context.js';

/** How long a download URL (and its request) lives (Velero's DownloadURLTTL). */
export const DOWNLOAD_URL_TTL_MS = 10 * 60_000;

/** What to do with a request now: process it, delete it (expired), or look again later. */
export function downloadRequestStep(request: DownloadRequest, now: Date): { action: 'process' } | { action: 'delete' } | { action: 'wait'; ms: number } {
  if ((request.status?.phase ?? DownloadRequestPhase.New) !== DownloadRequestPhase.Processed) return { action: 'process' };
  const expiration = request.status?.expiration ? Date.parse(request.status.expiration) : NaN;
  if (Number.isNaN(expiration) || expiration <= now.getTime()) return { action: 'delete' };
  return { action: 'wait', ms: expiration - now.getTime() };
}

/** The store that signs URLs for a location: one pointed at `config.publicUrl` when set. */
class SigningStores {
  private readonly cache = new Map<string, { version: string; store: BackupStore }>();
  constructor(private readonly ctx: ServerContext) {}

  async for(location: BackupStorageLocation, fallback: BackupStore): Promise<BackupStore> {
    const publicUrl = location.spec.config?.publicUrl;
    if (!publicUrl) return fallback;
    const key = location.metadata.name ?? '';
    const version = location.metadata.resourceVersion ?? '';
    const hit = this.cache.get(key);
    if (hit?.version === version) return hit.store;
    const signing: BackupStorageLocation = { ...location, spec: { ...location.spec, config: { ...location.spec.config, s3Url: publicUrl } } };
    const store = new BackupStore(await openLocationStore({ location: signing, kube: this.ctx.kube }));
    this.cache.set(key, { version, store });
    return store;
  }
}

export function downloadRequestReconciler(ctx: ServerContext, resolver = new LocationResolver(ctx.kube, ctx.namespace, ctx.plugins?.locations)) {
  const requests = customClient<DownloadRequest>(ctx.kube, Kinds.DownloadRequest, parseDownloadRequest);
  const signing = new SigningStores(ctx);

  async function urlFor(request: DownloadRequest): Promise<string | undefined> {
    const { target } = request.spec;
    const resolved = await resolveDownloadTarget({ kube: ctx.kube, namespace: ctx.namespace, resolver, target });
    if (!resolved.found) {
      ctx.logger.info({ request: request.metadata.name, kind: target.kind, target: target.name, reason: resolved.reason }, 'download target not found');
      return undefined;
    }
    if (!(await resolved.store.objects.head(resolved.key))) return undefined;
    const location = await resolver.get(resolved.locationName);
    const signer = location ? await signing.for(location, resolved.store) : resolved.store;
    const signed = await signer.signedDownloadUrl(target.kind, target.name, DOWNLOAD_URL_TTL_MS / 1000);
    if (signed) return signed;
    // Stores that cannot sign: a file:// URL (percent-encoded) names the file for clients on the same machine.
    const base = resolved.store.description.replace(/\/+$/, '');
    return base.startsWith('file://') ? pathToFileURL(`${base.slice('file://'.length)}/${resolved.key}`).href : `${base}/${resolved.key}`;
  }

  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    const request = await requests.get(key.namespace, key.name);
    if (!request) return;
    const step = downloadRequestStep(request, ctx.now());
    if (step.action === 'delete') {
      await requests.delete(key.namespace, key.name);
      return;
    }
    if (step.action === 'wait') return { requeueAfterMs: step.ms };
    const url = await urlFor(request);
    const expiration = statusTime(new Date(ctx.now().getTime() + DOWNLOAD_URL_TTL_MS));
    await requests.updateStatus(key.namespace, key.name, (o) => {
      if (o.status?.phase === DownloadRequestPhase.Processed) return false;
      o.status = { phase: DownloadRequestPhase.Processed, expiration, ...(url ? { downloadURL: url } : {}) };
    });
    return { requeueAfterMs: DOWNLOAD_URL_TTL_MS };
  };
}

export async function startDownloadRequestController(ctx: ServerContext): Promise<Stoppable> {
  const client = customClient<DownloadRequest>(ctx.kube, Kinds.DownloadRequest, parseDownloadRequest);
  const resolver = new LocationResolver(ctx.kube, ctx.namespace, ctx.plugins?.locations);
  ctx.http?.addRoute(DOWNLOAD_PATH_PREFIX, downloadHandler({ kube: ctx.kube, namespace: ctx.namespace, resolver, logger: ctx.logger, now: ctx.now }));
  return startCustomController<DownloadRequest>(ctx, client, {
    name: 'download-request',
    reconcile: downloadRequestReconciler(ctx, resolver),
    concurrency: 2,
  });
}
