/**
 * The health endpoint of long-running roles (server, node-agent): /healthz answers while the process is alive,
 * /readyz only once it is connected and its controllers run. Probes in the install manifests point here.
 */
import { createServer, type Server } from 'node:http';

export interface HealthServer {
  setReady(ready: boolean): void;
  close(): Promise<void>;
  readonly port: number;
}

export async function startHealthServer(opts: { port: number; host?: string }): Promise<HealthServer> {
  let ready = false;
  const server: Server = createServer((req, res) => {
    if (req.url === '/healthz') {
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
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    port: typeof address === 'object' && address ? address.port : opts.port,
  };
}
