/**
 * cairn's image for the test bed: built from this tree with `npm run image`'s code (buildah, layers cached, so an
 * unchanged tree rebuilds in seconds), exported as an OCI archive, and pushed into a cluster's registry, where real
 * nodes pull it from. Used by the e2e tier's global setup, `npm run demo` and the image tests. Several processes
 * (test runs, the demo) take turns through a lock, so one build's export is never read half-written.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withFileLock } from '../local-cluster/lock.js';
import { cacheRoot } from '../local-cluster/paths.js';
import { pushImageLayout, type PushResult } from '../local-cluster/registry-push.js';
import { buildImage, projectVersion, type BuildResult } from './build.js';
import { openBuildah } from './buildah.js';

export interface ImageArchive {
  /** OCI archive of cairn:dev as built from this tree. */
  archive: string;
  /** The reference stored in the archive (`cairn:<version>`). */
  ref: string;
  build: BuildResult;
}

/** The repository cairn's image has in the test bed's registry: `ghcr.io/cairn-backup/cairn:<tag>` maps there. */
export const TEST_BED_REPOSITORY = 'cairn-backup/cairn';

let built: Promise<ImageArchive> | undefined;

/** Builds the image (cached layers) and writes its OCI archive; once per process. */
export function ensureImageArchive(log: (line: string) => void): Promise<ImageArchive> {
  built ??= (async () => {
    const dir = join(cacheRoot(), 'images');
    mkdirSync(dir, { recursive: true });
    return withFileLock({ path: join(dir, '.build.lock'), timeoutMs: 30 * 60_000, onWait: (pid) => log(`waiting for the image build of pid ${pid}`) }, async () => {
      const buildah = await openBuildah(log);
      // Written beside and renamed into place under a name of its content: another checkout on this machine builds
      // its own tree into a file of its own, never over this one, which this process pushes later (after the lock).
      // A process still reading an earlier archive of the same name keeps reading it whole.
      const next = join(dir, `cairn-dev.${process.pid}.tar`);
      const build = await buildImage(buildah, { log, ociArchive: next, push: [], tlsVerify: true });
      const archive = join(dir, `cairn-dev-${build.id.replace(/^sha256:/, '').slice(0, 12)}.tar`);
      renameSync(next, archive);
      removeOldArchives(dir, archive);
      return { archive, ref: build.tags[0]!, build };
    });
  })();
  return built;
}

/** Archives of earlier builds are removed once no test run or demo can still be about to push them. */
const ARCHIVE_KEEP_MS = 6 * 3600_000;

function removeOldArchives(dir: string, keep: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (path === keep || !/^cairn-dev(-[0-9a-f]+|\.\d+)?\.tar$/.test(name)) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > ARCHIVE_KEEP_MS) rmSync(path, { force: true });
    } catch {
      // Another process removed it first.
    }
  }
}

export interface PushedImage {
  /**
   * What to install from: `<registry host>/cairn-backup/cairn:dev-<digest prefix>`. A tag per content, so a node that
   * already pulled an older `dev` (a reused cluster) never runs it instead (pull policy IfNotPresent).
   */
  reference: string;
  repository: string;
  tag: string;
  digest: string;
  /** Build (or cache check) and export. */
  buildSeconds: number;
  pushSeconds: number;
}

/**
 * Builds cairn's image and pushes it into the registry at `registryUrl` as `cairn-backup/cairn` with the tags
 * `dev-<digest>`, `dev` and the project's version (so `cairn install` with its default image works there too).
 */
export async function pushCairnImage(opts: { registryUrl: string; log: (line: string) => void }): Promise<PushedImage> {
  const t0 = Date.now();
  const image = await ensureImageArchive(opts.log);
  const t1 = Date.now();
  const host = new URL(opts.registryUrl).host;
  const layout = mkdtempSync(join(tmpdir(), 'cairn-image-push-'));
  let first: PushResult;
  let tag: string;
  try {
    execFileSync('tar', ['-xf', image.archive, '-C', layout]);
    const push = (t: string) => pushImageLayout(layout, { registryUrl: opts.registryUrl, repository: TEST_BED_REPOSITORY, tag: t });
    first = await push('dev');
    tag = `dev-${first.digest.replace('sha256:', '').slice(0, 12)}`;
    // Blobs are there after the first push: the other tags cost a manifest each.
    for (const t of [tag, `v${projectVersion()}`]) await push(t);
  } finally {
    rmSync(layout, { recursive: true, force: true });
  }
  const t2 = Date.now();
  return {
    reference: `${host}/${TEST_BED_REPOSITORY}:${tag}`,
    repository: `${host}/${TEST_BED_REPOSITORY}`,
    tag,
    digest: first.digest,
    buildSeconds: (t1 - t0) / 1000,
    pushSeconds: (t2 - t1) / 1000,
  };
}
