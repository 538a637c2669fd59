/**
 * Builds (once per machine, cached under ~/.cache/cairn/lib keyed by the source's hash) the bind shim that gives
 * pods per-node listening addresses on the shared host network (see bind-shim.c). Without a C compiler the shim
 * is skipped with a warning and wildcard binds stay host-wide.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cacheRoot } from '../paths.js';

const run = promisify(execFile);
const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'bind-shim.c');

export type BindShimResult = { ok: true; path: string } | { ok: false; reason: string };

export async function ensureBindShim(o: { cacheDir?: string } = {}): Promise<BindShimResult> {
  const source = await readFile(SOURCE);
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 12);
  const dir = join(o.cacheDir ?? cacheRoot(), 'lib');
  const target = join(dir, `cairn-bind-shim-${hash}.so`);
  if (existsSync(target)) return { ok: true, path: target };
  await mkdir(dir, { recursive: true });
  // Each kubelet builds to its own temporary name; the rename makes the finished file appear at once.
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    await run('cc', ['-shared', '-fPIC', '-O2', '-o', tmp, SOURCE, '-ldl']);
    await rename(tmp, target);
    return { ok: true, path: target };
  } catch (err) {
    await rm(tmp, { force: true });
    return { ok: false, reason: `cannot build the bind shim with cc: ${(err as Error).message.split('\n')[0] ?? ''}` };
  }
}

/**
 * Where containers see the shim: bind-mounted read-only at this path (the cache under /root is not readable by
 * non-root users) and preloaded by the launch script only, after its mounts.
 */
export const BIND_SHIM_CONTAINER_PATH = '/var/run/cairn-local/bind-shim.so';
