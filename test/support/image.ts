/**
 * cairn's image for the tests that run it: built with `npm run image`'s code (buildah, layers cached, so an
 * unchanged tree rebuilds in seconds) and exported once per test run as an OCI archive. Several test processes
 * take turns through a lock.
 */
import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { openBuildah } from '../../tools/image/buildah.js';
import { buildImage, type BuildResult } from '../../tools/image/build.js';
import { withFileLock } from '../../tools/local-cluster/lock.js';
import { cacheRoot } from '../../tools/local-cluster/paths.js';

export interface TestImage {
  /** OCI archive of cairn:dev as built from this tree. */
  archive: string;
  /** The reference stored in the archive (`cairn:<version>`). */
  ref: string;
  build: BuildResult;
}

let built: Promise<TestImage> | undefined;

export function ensureImage(log: (line: string) => void = (l) => process.stderr.write(`[image] ${l}\n`)): Promise<TestImage> {
  built ??= (async () => {
    const dir = join(cacheRoot(), 'images');
    mkdirSync(dir, { recursive: true });
    const archive = join(dir, 'cairn-dev.tar');
    return withFileLock({ path: join(dir, '.build.lock'), timeoutMs: 30 * 60_000 }, async () => {
      const buildah = await openBuildah(log);
      // Written beside and renamed into place: a test still importing the previous archive keeps reading it whole.
      const next = join(dir, `cairn-dev.${process.pid}.tar`);
      const build = await buildImage(buildah, { log, ociArchive: next, push: [], tlsVerify: true });
      renameSync(next, archive);
      return { archive, ref: build.tags[0]!, build };
    });
  })();
  return built;
}
