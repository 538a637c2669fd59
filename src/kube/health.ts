/**
 * The health endpoint of long-running roles (server, node-agent): /healthz answers while the process is alive,
 * /readyz only once it is connected and its controllers run. Probes in the install manifests point here.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Extra paths other parts of the role serve on the same port (e.g. the server's /download/). */
export interface HttpRoutes {
  /** Requests whose path starts with `prefix` go to `handler`. */
  addRoute(prefix: string, handler: RouteHandler): void;
}

export interface HealthServer extends HttpRoutes {
  setReady(ready: boolean): void;
  close(): Promise<void>;
  readonly port: number;
}

export async function startHealthServer(opts: { port: number; host?: string }): Promise<HealthServer> {
  let ready = false;
  const routes: { prefix: string; handler: RouteHandler }[] = [];
  const server: Server = createServer((req, res) => {
    const route = routes.find((r) => req.url?.startsWith(r.prefix));
    if (route) {
      route.handler(req, res);
    } else if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (req.url === '/readyz') {
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ok\n' : 'not ready\n');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const address = server.address();
  return {
    setReady: (r) => (ready = r),
    addRoute: (prefix, handler) => void routes.push({ prefix, handler }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    port: typeof address === 'object' && address ? address.port : opts.port,
  };
}
