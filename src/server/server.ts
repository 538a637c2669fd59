/**
 * The `server` role: connects to the API server, serves health, and runs the controllers of the install
 * namespace (./controllers.ts). Stops them in reverse order on SIGTERM.
 */
import type { Logger } from '../base/logger.js';
import type { Kube } from '../kube/client.js';
import { waitForApiServer } from '../kube/connect-retry.js';
import { requireResources } from '../kube/crd-presence.js';
import { allKindDefinitions } from '../api/kinds.js';
import { startHealthServer, startMetricsEndpoint, type HealthServer, type HttpListener } from '../kube/health.js';
import { MetricsRegistry } from '../base/metrics.js';
import { SERVER_METRICS } from './metrics/definitions.js';
import type { Role } from '../kube/lifecycle.js';
import type { ServerConfig, Stoppable } from './context.js';
import { CONTROLLERS } from './controllers.js';
import { ServerPlugins, type ServerPluginsOptions } from './plugins.js';
import { apiReader } from './backup/api-reader.js';
import { restoreRoleKeeper } from './rbac/restore-role.js';
import { restoreRoleName } from '../api/install-names.js';
import { limitHeapGrowthForServer, tuneHeapForDataPath, type HeapTuning } from '../datapath/heap-tuning.js';

const HEAP_CHECK_INTERVAL_MS = 1000;

export interface ServerOptions {
  kube: Kube;
  namespace: string;
  logger: Logger;
  healthPort: number;
  healthHost?: string;
  version: string;
  config: ServerConfig;
  /** Where external plugins are found and how they run; none when absent. */
  plugins?: Omit<ServerPluginsOptions, 'log'>;
  /** Where /metrics is served (`--metrics-address`); absent: on the health port. */
  metricsAddress?: { host?: string; port: number } | undefined;
}

export function createServer(opts: ServerOptions): Role {
  let health: HealthServer | undefined;
  let metricsListener: HttpListener | undefined;
  let plugins: ServerPlugins | undefined;
  const running: Stoppable[] = [];
  const abort = new AbortController();
  let heap: HeapTuning | undefined;
  let heapCheck: NodeJS.Timeout | undefined;
  return {
    async start() {
      // The young generation stays at its bound (../datapath/heap-tuning.ts) for the server's whole life; looked at
      // every second, as V8 may start it smaller and grow it. The old generation grows by at most half between
      // full GCs.
      heap = tuneHeapForDataPath();
      limitHeapGrowthForServer();
      heapCheck = setInterval(() => heap?.check(), HEAP_CHECK_INTERVAL_MS);
      heapCheck.unref();
      health = await startHealthServer({ port: opts.healthPort, ...(opts.healthHost ? { host: opts.healthHost } : {}) });
      const metrics = new MetricsRegistry(SERVER_METRICS, { processMetrics: true });
      metricsListener = await startMetricsEndpoint({ health, metrics, address: opts.metricsAddress });
      const apiVersion = await waitForApiServer(opts.kube, { logger: opts.logger, signal: abort.signal });
      // Every velero.io kind: a missing CRD would otherwise leave a controller retrying its list forever.
      await requireResources(opts.kube, 'the server', allKindDefinitions);
      opts.logger.info({ apiServer: opts.kube.server, apiVersion, namespace: opts.namespace }, 'connected to the API server');
      // As Velero: every plugin binary is listed before any controller runs, and a broken one stops the server.
      plugins = opts.plugins ? await ServerPlugins.start({ ...opts.plugins, log: opts.logger.child({ component: 'plugins' }) }) : undefined;
      const restoreRole = restoreRoleKeeper({ kube: opts.kube, api: apiReader(opts.kube), name: restoreRoleName(opts.namespace), logger: opts.logger.child({ controller: 'restore-role' }) });
      const ctx = { kube: opts.kube, namespace: opts.namespace, logger: opts.logger, version: opts.version, config: opts.config, now: () => new Date(), http: health, restoreRole, metrics, ...(plugins ? { plugins } : {}) };
      for (const c of CONTROLLERS) {
        running.push(await c.start({ ...ctx, logger: opts.logger.child({ controller: c.name }) }));
      }
      health.setReady(true);
    },
    async stop() {
      abort.abort(new Error('server stopping'));
      health?.setReady(false);
      for (const c of running.reverse()) await c.stop();
      await plugins?.stop();
      await metricsListener?.close();
      await health?.close();
      clearInterval(heapCheck);
      heap?.release();
    },
  };
}
