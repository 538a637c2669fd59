/**
 * The `restore-wait` init container's program (docs/fs-backup.md): every second, look for
 * `<restoresDir>/<volume>/.velero/<restore UID>` in every volume directory mounted under `/restores`; when all are
 * there, remove the `.velero` directories and return. No timeout: the pod stays in Init until the markers appear,
 * as in Velero. Lines go to `print` (stdout in the container) so `kubectl logs -c restore-wait` tells what it waits for.
 *
 * Only directories that are mount points count as volumes when the mount table lists any under `/restores`: every
 * volume the restore mounts there is one, and a directory that is not (left in an image, or on a node where
 * containers share the host's file system, as on the local test bed) would otherwise be waited for forever.
 */
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MARKER_DIR } from './completion-marker.js';

export const DEFAULT_RESTORES_DIR = '/restores';

export const DEFAULT_MOUNT_INFO = '/proc/self/mountinfo';

export interface RestoreHelperOptions {
  restoreUID: string;
  restoresDir?: string;
  /** The mount table read for the volumes mounted under restoresDir (default /proc/self/mountinfo). */
  mountInfoPath?: string;
  intervalMs?: number;
  print: (line: string) => void;
  signal?: AbortSignal;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface RestoreHelperResult {
  volumes: string[];
}

/** Undoes the octal escapes of a mountinfo path (`\040` for a space and so on). */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/**
 * The names of the directories mounted directly under `restoresDir`, from a mountinfo table; undefined when the
 * table cannot be read or lists none there (then every directory counts, as in Velero).
 */
export function mountedVolumeNames(restoresDir: string, mountInfoPath: string): Set<string> | undefined {
  let text: string;
  try {
    text = readFileSync(mountInfoPath, 'utf8');
  } catch {
    return undefined;
  }
  const prefix = `${restoresDir.replace(/\/+$/, '')}/`;
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const mountPoint = line.split(' ')[4];
    if (!mountPoint) continue;
    const path = unescapeMountPath(mountPoint);
    if (path.startsWith(prefix) && !path.slice(prefix.length).includes('/') && path.length > prefix.length) names.add(path.slice(prefix.length));
  }
  return names.size ? names : undefined;
}

/** One pass: true when every volume directory holds its marker. */
export function allMarkersPresent(opts: { restoresDir: string; restoreUID: string; print: (line: string) => void; mountInfoPath?: string }): { done: boolean; volumes: string[] } {
  const volumes: string[] = [];
  let done = true;
  const mounted = mountedVolumeNames(opts.restoresDir, opts.mountInfoPath ?? DEFAULT_MOUNT_INFO);
  for (const entry of readdirSync(opts.restoresDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    if (mounted && !mounted.has(entry.name)) continue;
    volumes.push(entry.name);
    const marker = join(opts.restoresDir, entry.name, MARKER_DIR, opts.restoreUID);
    if (exists(marker)) {
      opts.print(`Found the done file ${marker}`);
    } else {
      opts.print(`The filesystem restore done file ${marker} is not found yet. Retry later.`);
      done = false;
    }
  }
  return { done, volumes };
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason as Error);
    }, { once: true });
  });

export async function runRestoreHelper(opts: RestoreHelperOptions): Promise<RestoreHelperResult> {
  const restoresDir = opts.restoresDir ?? DEFAULT_RESTORES_DIR;
  const sleep = opts.sleep ?? defaultSleep;
  for (;;) {
    const pass = allMarkersPresent({ restoresDir, restoreUID: opts.restoreUID, print: opts.print, ...(opts.mountInfoPath ? { mountInfoPath: opts.mountInfoPath } : {}) });
    if (pass.done) {
      opts.print('All restic restores are done'); // Velero's exact line
      for (const volume of pass.volumes) {
        const dir = join(restoresDir, volume, MARKER_DIR);
        try {
          rmSync(dir, { recursive: true, force: true });
          opts.print(`Deleted ${dir}`);
        } catch (err) {
          opts.print(`ERROR: could not delete ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        }
      }
      opts.print('Done cleanup .velero folder');
      return { volumes: pass.volumes };
    }
    await sleep(opts.intervalMs ?? 1000, opts.signal);
  }
}
