/** Where the test bed keeps things: the repository it runs from and the per-user cache (~/.cache/cairn). */
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file lives in tools/local-cluster/). */
export function repoRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '../..');
}

/** $CAIRN_CACHE_DIR, else ~/.cache/cairn: built binaries, Go caches and cluster run directories. */
export function cacheRoot(): string {
  return process.env.CAIRN_CACHE_DIR ?? join(homedir(), '.cache', 'cairn');
}

/** Default run directory of a named cluster (`cluster:up` without --run-dir). */
export function defaultRunDir(clusterName: string): string {
  return join(cacheRoot(), 'run', clusterName);
}
