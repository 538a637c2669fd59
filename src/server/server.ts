/**
 * The `server` role: connects to the API server, serves health, and runs the controllers of the install
 * namespace. Controllers are added here one per file as the product grows (see docs/architecture.md).
 */
import type { Logger } from '../cli/logger.js';
import type { Kube } from '../kube/client.js';
import { waitForApiServer } from '../kube/connect-retry.js';
import { startHealthServer, type HealthServer } from './health.js';
import type { Role } from './lifecycle.js';
import { startServerStatusRequestController } from './server-status-request-controller.js';

export interface ServerOptions {
  kube: Kube;
  namespace: string;
  logger: Logger;
  healthPort: number;
  healthHost?: string;
  version: string;
}

interface Stoppable {
  stop(): Promise<void>;
}

export function createServer(opts: ServerOptions): Role {
  let health: HealthServer | undefined;
  const running: Stoppable[] = [];
  const abort = new AbortController();
  return {
    async start() {
      health = await startHealthServer({ port: opts.healthPort, ...(opts.healthHost ? { host: opts.healthHost } : {}) });
      const apiVersion = await waitForApiServer(opts.kube, { logger: opts.logger, signal: abort.signal });
      opts.logger.info({ apiServer: opts.kube.server, apiVersion, namespace: opts.namespace }, 'connected to the API server');
      running.push(await startServerStatusRequestController({ kube: opts.kube, namespace: opts.namespace, logger: opts.logger, version: opts.version }));
      health.setReady(true);
    },
    async stop() {
      abort.abort(new Error('server stopping'));
      health?.setReady(false);
      for (const c of running.reverse()) await c.stop();
      await health?.close();
    },
  };
}
