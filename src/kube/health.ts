/**
 * The health endpoint of long-running roles (server, node-agent): /healthz answers while the process is alive,
 * /readyz only once it is connected and its controllers run. Probes in the install manifests point here. The same
 * port serves /metrics (unless --metrics-address names another one) and the server's /download/.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { UsageError } from '../base/errors.js';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Extra paths other parts of the role serve on the same port (e.g. the server's /download/). */
export interface HttpRoutes {
  /** Requests whose path starts with `prefix` go to `handler`. */
  addRoute(prefix: string, handler: RouteHandler): void;
}

/** An HTTP listener whose paths are served by routes (health, /download/, /metrics). */
export interface HttpListener extends HttpRoutes {
  close(): Promise<void>;
  readonly port: number;
}

export interface HealthServer extends HttpListener {
  setReady(ready: boolean): void;
}

/** A listener that answers 404 to every path no route claims. */
export async function startHttpListener(opts: { port: number; host?: string }): Promise<HttpListener> {
  const routes: { prefix: string; handler: RouteHandler }[] = [];
  const server: Server = createServer((req, res) => {
    const route = routes.find((r) => req.url?.startsWith(r.prefix));
    if (route) route.handler(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const address = server.address();
  return {
    addRoute: (prefix, handler) => void routes.push({ prefix, handler }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    port: typeof address === 'object' && address ? address.port : opts.port,
  };
}

export async function startHealthServer(opts: { port: number; host?: string }): Promise<HealthServer> {
  let ready = false;
  const listener = await startHttpListener(opts);
  const exact = (path: string, handler: RouteHandler) => listener.addRoute(path, (req, res) => (req.url === path ? handler(req, res) : void res.writeHead(404).end()));
  exact('/healthz', (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n'));
  exact('/readyz', (_req, res) => void res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ok\n' : 'not ready\n'));
  return { ...listener, setReady: (r) => (ready = r) };
}

/** Anything that renders the Prometheus text format (base/metrics.ts's MetricsRegistry). */
export interface MetricsSource {
  readonly contentType: string;
  text(): Promise<string>;
}

/** Serves `/metrics` (GET) on `routes`. */
export function serveMetrics(routes: HttpRoutes, metrics: MetricsSource): void {
  routes.addRoute('/metrics', (req, res) => {
    const path = req.url?.split('?')[0];
    if (path !== '/metrics') return void res.writeHead(404).end();
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    metrics.text().then(
      (body) => res.writeHead(200, { 'content-type': metrics.contentType }).end(req.method === 'HEAD' ? undefined : body),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`cannot render metrics: ${(err as Error).message}\n`),
    );
  });
}

/**
 * Parses `--metrics-address` as Velero writes it: `:8085` (every address), `host:port`, `[v6]:port`.
 * Returns undefined for an empty string (metrics on the health port).
 */
export function parseListenAddress(flag: string, value: string): { host?: string; port: number } | undefined {
  if (value === '') return undefined;
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value);
  const port = Number(m?.[3]);
  if (!m || !Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(flag, `"${value}" is not an address of the form [host]:port`);
  const host = m[1] ?? m[2];
  return host ? { host, port } : { port };
}

/**
 * Serves /metrics on the health listener, or on a listener of its own when `address` names another port (Velero's
 * `--metrics-address`). Returns that listener, for the role to close when it stops.
 */
export async function startMetricsEndpoint(opts: { health: HttpListener; metrics: MetricsSource; address?: { host?: string; port: number } | undefined }): Promise<HttpListener | undefined> {
  if (!opts.address || opts.address.port === opts.health.port) {
    serveMetrics(opts.health, opts.metrics);
    return undefined;
  }
  const listener = await startHttpListener(opts.address);
  serveMetrics(listener, opts.metrics);
  return listener;
}
