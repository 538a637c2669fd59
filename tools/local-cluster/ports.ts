/** Free TCP ports on a loopback address, found at run time so several clusters (and CI jobs) never collide. */
import { createServer } from 'node:net';

/**
 * Asks the kernel for an unused port on `host`. Several calls in a row return distinct ports because each
 * probe stays bound until all of them are known.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<import('node:net').Server>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen({ host, port: 0, exclusive: true }, () => resolve(s));
    })),
  );
  const ports = servers.map((s) => {
    const addr = s.address();
    if (addr === null || typeof addr === 'string') throw new Error('unexpected server address');
    return addr.port;
  });
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [port] = await freePorts(1, host);
  return port!;
}
