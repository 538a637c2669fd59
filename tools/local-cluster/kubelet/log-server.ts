/**
 * The kubelet API port, as far as the test bed needs it: `/healthz` and `/containerLogs/<ns>/<pod>/<container>`
 * (follow, tailLines, limitBytes, previous; timestamps and sinceSeconds are accepted and ignored because the log
 * files hold raw output). Plain-HTTP exec, attach and port-forward answer 501; WebSocket exec is upgraded by
 * exec-server.ts on the same server.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { fileSize, lastLines } from './log-files.js';

export type LogTarget =
  | { ok: true; file: string; stillRunning: () => boolean }
  | { ok: false; status: number; message: string };

export interface LogServerOptions {
  host: string;
  port: number;
  cert: Buffer;
  key: Buffer;
  log: Logger;
  /** Finds the log file of a container's current (or previous) run. */
  findLog: (q: { namespace: string; pod: string; container: string; previous: boolean }) => LogTarget;
  followPollMs?: number;
}

export interface LogQuery {
  follow: boolean;
  previous: boolean;
  tailLines?: number | undefined;
  limitBytes?: number | undefined;
}

export function parseLogQuery(params: URLSearchParams): LogQuery {
  const bool = (k: string) => params.get(k) === 'true' || params.get(k) === '1';
  const num = (k: string) => {
    const v = params.get(k);
    if (v === null || v === '') return undefined;
    const n = Number(v);
    return Number.isFinite(n) && n >= 0 ? Math.floor(n) : undefined;
  };
  return { follow: bool('follow'), previous: bool('previous'), tailLines: num('tailLines'), limitBytes: num('limitBytes') };
}

export function startLogServer(o: LogServerOptions): Promise<Server> {
  const server = createServer({ cert: o.cert, key: o.key, requestCert: false }, (req, res) => {
    void handle(o, req, res).catch((err: unknown) => {
      o.log.warn({ err: (err as Error).message, url: req.url }, 'kubelet API request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve(server));
  });
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(body);
}

async function handle(o: LogServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'https://kubelet');
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'healthz') return text(res, 200, 'ok');
  if (['exec', 'attach', 'portForward', 'run'].includes(parts[0] ?? '')) return text(res, 501, 'not implemented by the cairn local kubelet');
  if (parts[0] !== 'containerLogs' || parts.length !== 4) return text(res, 404, 'not found');
  const [, namespace = '', pod = '', container = ''] = parts;
  const q = parseLogQuery(url.searchParams);
  const target = o.findLog({ namespace, pod, container, previous: q.previous });
  if (!target.ok) return text(res, target.status, target.message);
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
  await streamLog(o, target, q, req, res);
}

async function streamLog(
  o: LogServerOptions,
  target: { file: string; stillRunning: () => boolean },
  q: LogQuery,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let budget = q.limitBytes ?? Number.POSITIVE_INFINITY;
  const send = (buf: Buffer): boolean => {
    if (budget <= 0) return false;
    const part = buf.length > budget ? buf.subarray(0, budget) : buf;
    budget -= part.length;
    res.write(part);
    return budget > 0;
  };
  let offset: number;
  if (q.tailLines !== undefined) {
    const all = await readFile(target.file).catch(() => Buffer.alloc(0));
    offset = all.length;
    if (!send(Buffer.from(lastLines(all.toString('utf8'), q.tailLines)))) return void res.end();
  } else {
    offset = 0;
  }
  let closed = false;
  req.on('close', () => (closed = true));
  for (;;) {
    const size = (await fileSize(target.file)) ?? 0;
    if (size > offset) {
      const chunk = await readRange(target.file, offset, size);
      offset = size;
      if (!send(chunk)) break;
    }
    if (!q.follow || closed) break;
    if (!target.stillRunning()) {
      // One last read after the container stopped, then the stream ends like the kubelet's.
      const final = (await fileSize(target.file)) ?? 0;
      if (final > offset) send(await readRange(target.file, offset, final));
      break;
    }
    await new Promise((r) => setTimeout(r, o.followPollMs ?? 200));
  }
  res.end();
}

function readRange(file: string, start: number, end: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    createReadStream(file, { start, end: end - 1 })
      .on('data', (c) => chunks.push(c as Buffer))
      .on('end', () => resolve(Buffer.concat(chunks)))
      .on('error', reject);
  });
}
