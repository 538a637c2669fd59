/**
 * The `node-agent server` role (one per node, from the DaemonSet): connects, serves health and runs the data
 * movement controllers of its node. The controllers arrive with the fs-backup work; today it connects, reports
 * ready and stops cleanly.
 */
import type { Logger } from '../cli/logger.js';
import type { Kube } from '../kube/client.js';
import { waitForApiServer } from '../kube/connect-retry.js';
import { startHealthServer, type HealthServer } from '../server/health.js';
import type { Role } from '../server/lifecycle.js';

export interface NodeAgentOptions {
  kube: Kube;
  namespace: string;
  nodeName: string;
  logger: Logger;
  healthPort: number;
  healthHost?: string;
}

export function createNodeAgent(opts: NodeAgentOptions): Role {
  let health: HealthServer | undefined;
  const abort = new AbortController();
  return {
    async start() {
      health = await startHealthServer({ port: opts.healthPort, ...(opts.healthHost ? { host: opts.healthHost } : {}) });
      const apiVersion = await waitForApiServer(opts.kube, { logger: opts.logger, signal: abort.signal });
      opts.logger.info({ apiServer: opts.kube.server, apiVersion, node: opts.nodeName, namespace: opts.namespace }, 'connected to the API server');
      health.setReady(true);
    },
    async stop() {
      abort.abort(new Error('node-agent stopping'));
      health?.setReady(false);
      await health?.close();
    },
  };
}
