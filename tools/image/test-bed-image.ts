/**
 * cairn's image for the test bed: built from this tree with `npm run image`'s code (buildah, layers cached, so an
 * unchanged tree rebuilds in seconds), exported as an OCI archive, and pushed into a cluster's registry, where real
 * nodes pull it from. Used by the e2e tier's global setup, `npm run demo` and the image tests. Several processes
 * (test runs, the demo) take turns through a lock, so one build's export is never read half-written.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
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

const ARCHIVE_NAME = /^cairn-dev\.(\d+)\.tar$/;

/** Whether a process of this pid still runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Builds the image (cached layers) and writes its OCI archive; once per process. The archive is this process's own
 * (`cairn-dev.<pid>.tar`, removed when it exits): several trees share the cache (worktrees, the demo), and a build of
 * another tree that runs once the lock is let go must not replace the image this process pushes minutes later.
 */
export function ensureImageArchive(log: (line: string) => void): Promise<ImageArchive> {
  built ??= (async () => {
    const dir = join(cacheRoot(), 'images');
    mkdirSync(dir, { recursive: true });
    return withFileLock({ path: join(dir, '.build.lock'), timeoutMs: 30 * 60_000, onWait: (pid) => log(`waiting for the image build of pid ${pid}`) }, async () => {
      // Archives of processes that are gone (killed before their exit hook ran).
      for (const name of readdirSync(dir)) {
        const pid = Number(ARCHIVE_NAME.exec(name)?.[1] ?? NaN);
        if (Number.isInteger(pid) && pid !== process.pid && !alive(pid)) rmSync(join(dir, name), { force: true });
      }
      const buildah = await openBuildah(log);
      const archive = join(dir, `cairn-dev.${process.pid}.tar`);
      const build = await buildImage(buildah, { log, ociArchive: archive, push: [], tlsVerify: true });
      process.once('exit', () => rmSync(archive, { force: true }));
      return { archive, ref: build.tags[0]!, build };
    });
  })();
  return built;
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
