/**
 * What every data-path worker thread runs first (worker-threads.ts starts it): it imports the worker module named in
 * its start (`workerData`, or the first message for a spare booted ahead of use), calls the module's `main(data,
 * port)` and hands every later message to the handler main returns. Messages that arrive while the module loads
 * wait for it, in order.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';

/** Which module to run (a file URL) and its data. */
export interface WorkerStart {
  module: string;
  data: unknown;
}

/** What a worker module exports. */
export interface WorkerModule {
  main(data: unknown, port: MessagePort): (message: unknown) => void;
}

const port = parentPort!;
const early: unknown[] = [];
let handler: ((message: unknown) => void) | undefined;
let started = workerData !== null && workerData !== undefined;

async function start(what: WorkerStart): Promise<void> {
  const module = (await import(what.module)) as WorkerModule;
  const handle = module.main(what.data, port);
  for (const message of early.splice(0)) handle(message);
  handler = handle;
}

port.on('message', (message: unknown) => {
  if (!started) {
    started = true;
    // A failed import is an unhandled rejection: the thread ends and the pool sees its 'error' event.
    void start(message as WorkerStart);
  } else if (handler) {
    handler(message);
  } else {
    early.push(message);
  }
});
if (started) void start(workerData as WorkerStart);
