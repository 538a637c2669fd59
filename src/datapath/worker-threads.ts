/**
 * How the data path starts its worker threads (seal-pool, chunk-pool, open-pool, scan-ahead). A worker runs an ordinary module
 * of this folder (seal-worker.ts, chunk-worker.ts, open-worker.ts), compiled with the rest: every thread starts at
 * worker-entry.ts, which imports the module it is told to and runs its `main`.
 *
 * Node's own start-up of a worker thread takes ~80 ms of CPU here before the worker's code runs. A command that will
 * need workers can boot spares first (bootSpareWorkers) and open the repository meanwhile: the key derivation
 * (scrypt, ~0.1 s on the thread pool) leaves this thread idle, and the spares' start-up fills that time instead of
 * competing with the backup's first files. A spare waits for its module and data in its first message; without
 * spares a worker is started directly.
 *
 * From dist/ the modules are the compiled .js files. From the TypeScript sources (tests, `bin/dev.js`) they are the
 * .ts files, which a worker thread loads through tsx (a development dependency), as the main thread does.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ChunkWorkerData } from './chunk-worker.js';
import type { ContentWorkerData } from './kopia/content-worker.js';
import type { OpenWorkerData } from './open-worker.js';
import type { ScanWorkerData } from './scan-worker.js';
import type { SealWorkerData } from './seal-worker.js';
import type { WorkerStart } from './worker-entry.js';

/** Each worker module and the data its `main` takes. */
export interface WorkerModules {
  'seal-worker': SealWorkerData;
  'open-worker': OpenWorkerData;
  'chunk-worker': ChunkWorkerData;
  'kopia/content-worker': ContentWorkerData;
  'scan-worker': ScanWorkerData;
}

/** A small young generation makes workers drop the temporary buffers of zstd and the ciphers promptly. */
const RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 4 };

const FROM_SOURCE = import.meta.url.endsWith('.ts');
const EXTENSION = FROM_SOURCE ? '.ts' : '.js';

/** Node options of a worker: the process's own, plus tsx when running from the sources without it. */
function workerExecArgv(): string[] | undefined {
  if (!FROM_SOURCE || process.execArgv.some((a) => a.includes('tsx'))) return undefined;
  return [...process.execArgv, '--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
}

const execArgv = workerExecArgv();

function newWorker(start?: WorkerStart): Worker {
  return new Worker(new URL(`./worker-entry${EXTENSION}`, import.meta.url), {
    ...(start ? { workerData: start } : {}),
    ...(execArgv ? { execArgv } : {}),
    resourceLimits: RESOURCE_LIMITS,
  });
}

const spares: Worker[] = [];

function dropSpare(this: Worker): void {
  const at = spares.indexOf(this);
  if (at >= 0) spares.splice(at, 1);
}

/**
 * Boots worker threads ahead of use, up to `count` waiting in all. They do not keep the process alive, and the ones
 * never used end with it.
 */
export function bootSpareWorkers(count: number): void {
  while (spares.length < count) {
    const worker = newWorker();
    worker.unref();
    worker.on('error', dropSpare);
    spares.push(worker);
  }
}

/** Spares booted and not yet used. */
export function spareWorkerCount(): number {
  return spares.length;
}

/** Runs a worker module with its data: on a booted spare when one is waiting, else on a new thread. */
export function startWorker<N extends keyof WorkerModules>(name: N, data: WorkerModules[N]): Worker {
  const start: WorkerStart = { module: new URL(`./${name}${EXTENSION}`, import.meta.url).href, data };
  const spare = spares.shift();
  if (spare) {
    spare.off('error', dropSpare);
    spare.ref();
    spare.postMessage(start);
    return spare;
  }
  return newWorker(start);
}
