import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePort, runProbe, type ProbeTarget } from '../../../tools/local-cluster/kubelet/probes.js';

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => {
    res.statusCode = req.url === '/ok' ? 200 : req.url === '/redirect' ? 302 : 503;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const target = (): ProbeTarget => ({
  podIp: '127.0.0.1',
  container: { name: 'c', ports: [{ name: 'health', containerPort: port }] },
  pid: process.pid,
  env: new Map(),
});

describe('probes', () => {
  it('resolves named and numeric ports', () => {
    const c = { name: 'c', ports: [{ name: 'health', containerPort: 8086 }] };
    expect(resolvePort('health', c)).toBe(8086);
    expect(resolvePort(9000, c)).toBe(9000);
    expect(resolvePort('9001', c)).toBe(9001);
    expect(resolvePort('nope', c)).toBeUndefined();
  });

  it('httpGet passes on 2xx/3xx and fails otherwise', async () => {
    expect(await runProbe({ httpGet: { path: '/ok', port: 'health' } }, target())).toEqual({ ok: true });
    expect(await runProbe({ httpGet: { path: '/redirect', port } }, target())).toEqual({ ok: true });
    expect(await runProbe({ httpGet: { path: '/bad', port } }, target())).toEqual({ ok: false, message: 'HTTP probe failed with statuscode: 503' });
  });

  it('tcpSocket passes when the port accepts and fails when nothing listens', async () => {
    expect(await runProbe({ tcpSocket: { port } }, target())).toEqual({ ok: true });
    const closed = await runProbe({ tcpSocket: { port: 1 } }, target());
    expect(closed.ok).toBe(false);
  });
});
