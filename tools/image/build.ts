/** Builds the Containerfile into `cairn:<version>` and `cairn:dev`, measures it, exports and pushes it. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../local-cluster/paths.js';
import { containersDir, type Buildah } from './buildah.js';
import { ensureNodeBases, type NodeBases } from './node-base.js';

export interface BuildOptions {
  log: (line: string) => void;
  /** Bases to build on; made from Debian packages when absent. */
  bases?: NodeBases | undefined;
  ociArchive?: string | undefined;
  /** Registry references to push to (`host:port/repo[:tag]`, tag defaulting to the version). */
  push: string[];
  tlsVerify: boolean;
}

export interface BuildResult {
  tags: string[];
  id: string;
  compressedBytes: number;
  unpacked: string;
  layers: number;
  seconds: number;
  pushed: string[];
}

export function projectVersion(): string {
  return (JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

function revision(): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

/**
 * A machine behind a TLS-inspecting proxy names the proxy's CA in NODE_EXTRA_CA_CERTS: the build's npm needs it too.
 * It is mounted read-only for the build steps only, so it is in no layer of the image.
 */
function extraCaArgs(): string[] {
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  if (!ca || !existsSync(ca)) return [];
  return ['--volume', `${ca}:/run/build-ca.crt:ro`, '--build-arg', 'NODE_EXTRA_CA_CERTS=/run/build-ca.crt'];
}

export async function buildImage(buildah: Buildah, opts: BuildOptions): Promise<BuildResult> {
  const started = Date.now();
  const bases = opts.bases ?? (await ensureNodeBases(buildah, opts.log));
  const version = projectVersion();
  const tags = [`cairn:${version}`, 'cairn:dev'];
  opts.log(`building ${tags.join(', ')} on ${bases.base}`);
  await buildah.run([
    'build',
    '--layers',
    '--pull=never',
    '--network', 'host',
    '--isolation', 'chroot',
    '-f', 'Containerfile',
    '--build-arg', `BASE=${bases.base}`,
    '--build-arg', `BUILD_BASE=${bases.buildBase}`,
    '--build-arg', `VERSION=${version}`,
    '--build-arg', `REVISION=${revision()}`,
    ...extraCaArgs(),
    ...tags.flatMap((t) => ['-t', t]),
    '.',
  ], { inherit: true, cwd: repoRoot() });
  const id = (await buildah.run(['inspect', '--type', 'image', '--format', '{{.FromImageID}}', 'cairn:dev'])).trim();
  const size = await measure(buildah);
  if (opts.ociArchive) {
    rmSync(opts.ociArchive, { force: true });
    await buildah.run(['push', '--quiet', 'cairn:dev', `oci-archive:${opts.ociArchive}:cairn:${version}`]);
    opts.log(`wrote ${opts.ociArchive}`);
  }
  const pushed: string[] = [];
  for (const target of opts.push) {
    const ref = /:[^/]+$/.test(target) ? target : `${target}:${version}`;
    await buildah.run(['push', '--quiet', `--tls-verify=${opts.tlsVerify}`, 'cairn:dev', `docker://${ref}`]);
    pushed.push(ref);
  }
  return { tags, id, ...size, seconds: (Date.now() - started) / 1000, pushed };
}

interface OciManifest {
  layers: { size: number }[];
  config: { size: number };
}

/** Compressed size as a registry would store it (gzip layers, from an OCI layout), and the unpacked size. */
async function measure(buildah: Buildah): Promise<{ compressedBytes: number; unpacked: string; layers: number }> {
  const dir = mkdtempSync(join(containersDir(), 'measure-'));
  try {
    await buildah.run(['push', '--quiet', '--compression-format', 'gzip', 'cairn:dev', `oci:${dir}:measure`]);
    const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    const digest = index.manifests[0]!.digest.replace('sha256:', '');
    const manifest = JSON.parse(readFileSync(join(dir, 'blobs', 'sha256', digest), 'utf8')) as OciManifest;
    const compressedBytes = manifest.layers.reduce((n, l) => n + l.size, manifest.config.size);
    // buildah reports the unpacked size only as text ("230 MB").
    const images = JSON.parse(await buildah.run(['images', '--json', 'cairn:dev'])) as { size: string }[];
    return { compressedBytes, unpacked: images[0]?.size ?? '?', layers: manifest.layers.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
