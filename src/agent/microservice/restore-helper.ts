/**
 * The `restore-wait` init container's program (velero-interfaces.md §5): every second, look for
 * `<restoresDir>/<volume>/.velero/<restore UID>` in every volume directory mounted under `/restores`; when all are
 * there, remove the `.velero` directories and return. No timeout: the pod stays in Init until the markers appear,
 * as in Velero. Lines go to `print` (stdout in the container) so `kubectl logs -c restore-wait` tells what it waits for.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MARKER_DIR } from './completion-marker.js';

export const DEFAULT_RESTORES_DIR = '/restores';

export interface RestoreHelperOptions {
  restoreUID: string;
  restoresDir?: string;
  intervalMs?: number;
  print: (line: string) => void;
  signal?: AbortSignal;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface RestoreHelperResult {
  volumes: string[];
}

/** One pass: true when every volume directory holds its marker. */
export function allMarkersPresent(opts: { restoresDir: string; restoreUID: string; print: (line: string) => void }): { done: boolean; volumes: string[] } {
  const volumes: string[] = [];
  let done = true;
  for (const entry of readdirSync(opts.restoresDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
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
    const pass = allMarkersPresent({ restoresDir, restoreUID: opts.restoreUID, print: opts.print });
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
