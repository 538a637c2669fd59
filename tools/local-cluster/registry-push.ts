/**
 * Pushes images into the test bed's registry over the OCI distribution API (plain HTTP): an OCI image layout
 * directory (`index.json` + `blobs/sha256/...`) or an OCI archive (the same layout in a tar file, what
 * `buildah push ... oci-archive:` writes). Blobs the registry already has are skipped (HEAD first), so pushing the
 * same image to a fresh cluster costs only its upload once per cluster. An image index (several platforms) is
 * pushed with all its manifests.
 */
import { execFile } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

interface ManifestLike {
  mediaType?: string;
  config?: Descriptor;
  layers?: Descriptor[];
  manifests?: Descriptor[];
}

const INDEX_TYPES = new Set(['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json']);
const REF_NAME = 'org.opencontainers.image.ref.name';

export interface PushOptions {
  /** Registry base URL, `http://host:port`. */
  registryUrl: string;
  /** Repository in the registry, e.g. `cairn` or `library/busybox`. */
  repository: string;
  tag: string;
  /**
   * Which image of the layout to push, by its `org.opencontainers.image.ref.name` annotation; needed only when
   * the layout's index.json lists more than one.
   */
  refName?: string;
}

export interface PushResult {
  /** `<host>/<repository>:<tag>`. */
  reference: string;
  /** Digest of the pushed manifest (or index). */
  digest: string;
  /** Bytes uploaded (blobs the registry already had are not counted). */
  uploadedBytes: number;
}

/** Pushes one image of an OCI image layout directory as <repository>:<tag>. */
export async function pushImageLayout(layoutDir: string, opts: PushOptions): Promise<PushResult> {
  const index = JSON.parse(readFileSync(join(layoutDir, 'index.json'), 'utf8')) as ManifestLike;
  const top = pickManifest(index.manifests ?? [], opts.refName, layoutDir);
  const counter = { bytes: 0 };
  await pushManifestTree(layoutDir, top, opts, opts.tag, counter);
  return { reference: `${new URL(opts.registryUrl).host}/${opts.repository}:${opts.tag}`, digest: top.digest, uploadedBytes: counter.bytes };
}

/** Pushes one image of an OCI archive (a tar of an OCI image layout) as <repository>:<tag>. */
export async function pushOciArchive(archive: string, opts: PushOptions): Promise<PushResult> {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-oci-'));
  try {
    await run('tar', ['-xf', archive, '-C', dir]);
    return await pushImageLayout(dir, opts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function pickManifest(manifests: Descriptor[], refName: string | undefined, where: string): Descriptor {
  if (refName !== undefined) {
    const found = manifests.find((m) => m.annotations?.[REF_NAME] === refName);
    if (!found) throw new Error(`${where}: no image named ${refName} in index.json`);
    return found;
  }
  if (manifests.length !== 1) throw new Error(`${where}: index.json lists ${manifests.length} images; name one (refName)`);
  return manifests[0]!;
}

const blobPath = (layoutDir: string, digest: string) => join(layoutDir, 'blobs', ...digest.split(':'));

async function pushManifestTree(layoutDir: string, desc: Descriptor, opts: PushOptions, reference: string, counter: { bytes: number }): Promise<void> {
  const body = readFileSync(blobPath(layoutDir, desc.digest));
  const manifest = JSON.parse(body.toString('utf8')) as ManifestLike;
  const mediaType = manifest.mediaType ?? desc.mediaType;
  if (INDEX_TYPES.has(mediaType)) {
    // Children go by digest; only the index itself gets the tag.
    for (const child of manifest.manifests ?? []) await pushManifestTree(layoutDir, child, opts, child.digest, counter);
  } else {
    for (const blob of [manifest.config, ...(manifest.layers ?? [])]) {
      if (blob) counter.bytes += await pushBlob(layoutDir, blob.digest, opts);
    }
  }
  const url = `${opts.registryUrl}/v2/${opts.repository}/manifests/${reference}`;
  const res = await send('PUT', url, { 'content-type': mediaType, 'content-length': String(body.length) }, body);
  if (res.status !== 201) throw new Error(`PUT ${url}: HTTP ${res.status} ${res.body}`);
}

/** Uploads one blob unless the registry has it; returns the bytes sent. */
async function pushBlob(layoutDir: string, digest: string, opts: PushOptions): Promise<number> {
  const base = `${opts.registryUrl}/v2/${opts.repository}/blobs`;
  if ((await send('HEAD', `${base}/${digest}`)).status === 200) return 0;
  const start = await send('POST', `${base}/uploads/`, { 'content-length': '0' });
  const location = start.headers.location;
  if (start.status !== 202 || !location) throw new Error(`POST ${base}/uploads/: HTTP ${start.status} ${start.body}`);
  const uploadUrl = new URL(location, opts.registryUrl);
  uploadUrl.searchParams.set('digest', digest);
  const file = blobPath(layoutDir, digest);
  const size = statSync(file).size;
  const res = await send('PUT', uploadUrl.toString(), { 'content-type': 'application/octet-stream', 'content-length': String(size) }, file);
  if (res.status !== 201) throw new Error(`PUT blob ${digest}: HTTP ${res.status} ${res.body}`);
  return size;
}

interface Response {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

/** One HTTP request; a string body is a file path streamed from disk. */
function send(method: string, url: string, headers: Record<string, string> = {}, body?: Buffer | string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0,
        headers: { location: res.headers.location },
        body: Buffer.concat(chunks).toString('utf8').slice(0, 500),
      }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (typeof body === 'string') {
      createReadStream(body).on('error', reject).pipe(req);
    } else {
      req.end(body);
    }
  });
}
