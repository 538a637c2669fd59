/**
 * Writes a small single-layer OCI image layout (index.json, oci-layout, blobs/sha256/...) from a list of files:
 * the test bed's own images (the pause image, the busybox workload image, a database image) are a handful of
 * static binaries and libraries, so writing the layout directly (tar-stream + gzip) is enough, needs no daemon,
 * no root and no image store, and takes milliseconds. The result is reproducible: fixed times and owners,
 * entries in path order, so the same inputs give the same digest (the cache key of images.ts).
 * The Containerfile-built cairn image does not come through here.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';

export type LayerEntry =
  | { type: 'file'; path: string; mode: number; content: Buffer }
  | { type: 'directory'; path: string; mode: number }
  | { type: 'symlink'; path: string; target: string };

export interface LayoutOptions {
  /** gzip level of the layer: 9 (default) for small images, lower for big ones (a Node.js binary). */
  gzipLevel?: number;
}

export interface ImageConfig {
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
  workingDir?: string;
  user?: string;
  labels?: Record<string, string>;
}

export interface LayoutResult {
  dir: string;
  /** Digest of the image manifest. */
  digest: string;
  /** Size of the compressed layer. */
  layerBytes: number;
}

/** A time far from any build's clock: the same files give the same layer on any machine. */
const EPOCH = new Date(0);

export async function writeImageLayout(dir: string, entries: LayerEntry[], config: ImageConfig, opts: LayoutOptions = {}): Promise<LayoutResult> {
  const tarball = await layerTar(withParents(entries));
  const layer = gzipSync(tarball, { level: opts.gzipLevel ?? 9 });
  const imageConfig = {
    architecture: 'amd64',
    os: 'linux',
    created: EPOCH.toISOString(),
    config: {
      Entrypoint: config.entrypoint,
      Cmd: config.cmd,
      Env: config.env ?? ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
      WorkingDir: config.workingDir ?? '/',
      User: config.user,
      Labels: config.labels,
    },
    rootfs: { type: 'layers', diff_ids: [sha256(tarball)] },
    history: [{ created: EPOCH.toISOString(), created_by: 'cairn test bed (tools/local-cluster/images)' }],
  };
  // Build in a scratch folder and rename: a reader never sees half a layout.
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const configBlob = Buffer.from(JSON.stringify(imageConfig));
  const layerDesc = putBlob(tmp, 'application/vnd.oci.image.layer.v1.tar+gzip', layer);
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: putBlob(tmp, 'application/vnd.oci.image.config.v1+json', configBlob),
    layers: [layerDesc],
  }));
  const manifestDesc = putBlob(tmp, 'application/vnd.oci.image.manifest.v1+json', manifest);
  writeFileSync(join(tmp, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(join(tmp, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [manifestDesc] }));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  renameSync(tmp, dir);
  return { dir, digest: manifestDesc.digest, layerBytes: layer.length };
}

/** A file of the host copied into the image (mode from the argument, content read now). */
export function hostFile(path: string, from: string, mode = 0o755): LayerEntry {
  return { type: 'file', path, mode, content: readFileSync(from) };
}

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

function putBlob(layoutDir: string, mediaType: string, content: Buffer): Descriptor {
  const digest = sha256(content);
  const file = join(layoutDir, 'blobs', 'sha256', digest.slice('sha256:'.length));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  return { mediaType, digest, size: content.length };
}

function sha256(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** Adds the missing parent directories of every entry (mode 0755), sorted so parents come first. */
function withParents(entries: LayerEntry[]): LayerEntry[] {
  const byPath = new Map<string, LayerEntry>();
  for (const e of entries) {
    const path = posix.normalize(e.path).replace(/^\/+/, '');
    byPath.set(path, { ...e, path });
    for (let p = posix.dirname(path); p !== '.' && p !== '/'; p = posix.dirname(p)) {
      if (!byPath.has(p)) byPath.set(p, { type: 'directory', path: p, mode: 0o755 });
    }
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function layerTar(entries: LayerEntry[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const p = pack();
    const chunks: Buffer[] = [];
    p.on('data', (c: unknown) => chunks.push(c as Buffer));
    p.on('end', () => resolve(Buffer.concat(chunks)));
    p.on('error', reject);
    const common = { mtime: EPOCH, uid: 0, gid: 0, uname: 'root', gname: 'root' };
    for (const e of entries) {
      if (e.type === 'file') p.entry({ ...common, name: e.path, mode: e.mode, type: 'file' }, e.content);
      else if (e.type === 'directory') p.entry({ ...common, name: `${e.path}/`, mode: e.mode, type: 'directory' });
      else p.entry({ ...common, name: e.path, mode: 0o777, type: 'symlink', linkname: e.target });
    }
    p.finalize();
  });
}
