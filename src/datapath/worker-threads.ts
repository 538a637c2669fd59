/**
 * How the data path starts its worker threads (seal-pool, chunk-pool, open-pool). Node's own start-up of a worker
 * thread takes ~80 ms of CPU here before the worker's code runs. A command that will need workers can boot spares
 * first (bootSpareWorkers) and open the repository meanwhile: the key derivation (scrypt, ~0.1 s on the thread pool)
 * leaves this thread idle, and the spares' start-up fills that time instead of competing with the backup's first
 * files. A spare waits for its code and data in its first message; without spares a worker is started directly.
 *
 * Worker code is plain CommonJS JavaScript in a string that reads `workerData` and requires what it needs.
 */
import { Worker } from 'node:worker_threads';

/** A small young generation makes workers drop the temporary buffers of zstd and the ciphers promptly. */
const RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 4 };

const SPARE_SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.once('message', ({ source, workerData }) => new Function('require', 'workerData', source)(require, workerData));
`;

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
    const worker = new Worker(SPARE_SOURCE, { eval: true, resourceLimits: RESOURCE_LIMITS });
    worker.unref();
    worker.on('error', dropSpare);
    spares.push(worker);
  }
}

/** Spares booted and not yet used. */
export function spareWorkerCount(): number {
  return spares.length;
}

/** Runs `source` on a worker thread with `workerData`: a booted spare when one is waiting, else a new thread. */
export function startWorker(source: string, workerData: unknown): Worker {
  const spare = spares.shift();
  if (spare) {
    spare.off('error', dropSpare);
    spare.ref();
    spare.postMessage({ source, workerData });
    return spare;
  }
  return new Worker(`const { workerData } = require('node:worker_threads');\n${source}`, { eval: true, workerData, resourceLimits: RESOURCE_LIMITS });
}
