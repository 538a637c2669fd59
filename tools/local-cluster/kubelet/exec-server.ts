/**
 * `exec` on the kubelet port over WebSocket (the channel.k8s.io v4/v5 protocols). Since Kubernetes 1.36 the API
 * server hands WebSocket exec straight to kubelets that declare the node feature ExtendWebSocketsToKubelet, so
 * `kubectl exec` and client libraries work without SPDY. The command runs inside the container's mount
 * namespace as its user (nsenter), in its working directory and environment. No TTY: with `-t` the output
 * still arrives, unformatted. Attach and port-forward are refused.
 */
import { spawn } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import type { Server } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';

/** Channels of the remotecommand WebSocket protocol: the first byte of every binary message. */
export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;
const PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];

export interface ExecTarget {
  pid: number;
  env: ReadonlyMap<string, string>;
  /** The command as the container would run it (image mapping applied). */
  argv: string[];
  runAsUser?: number | undefined;
  runAsGroup?: number | undefined;
  /** Resolves once the container is set up (false: it ended first). */
  ready: Promise<boolean>;
}

export type ExecLookup = (q: { namespace: string; pod: string; container: string; command: string[] }) =>
  | { ok: true; target: ExecTarget }
  | { ok: false; status: number; message: string };

export interface ExecRequest {
  namespace: string;
  pod: string;
  container: string;
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export function parseExecRequest(url: URL): ExecRequest | undefined {
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'exec' || parts.length < 4) return undefined;
  // The API server names the streams input/output/error when it calls the kubelet; clients say stdin/stdout/stderr.
  const flag = (...keys: string[]) => keys.some((k) => ['1', 'true'].includes(url.searchParams.get(k) ?? ''));
  return {
    namespace: parts[1] ?? '',
    pod: parts[2] ?? '',
    container: parts[3] ?? url.searchParams.get('container') ?? '',
    command: url.searchParams.getAll('command'),
    stdin: flag('input', 'stdin'),
    stdout: flag('output', 'stdout'),
    stderr: flag('error', 'stderr'),
    tty: flag('tty'),
  };
}

/** The Status the error channel carries when the command ends (v4/v5). */
export function exitStatus(exitCode: number, command: string[]): object {
  if (exitCode === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

function refuse(socket: Duplex, status: number, message: string): void {
  socket.end(`HTTP/1.1 ${status} ${status === 501 ? 'Not Implemented' : 'Error'}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${message}`);
}

export function attachExec(o: { server: Server; lookup: ExecLookup; log: Logger }): void {
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => PROTOCOLS.find((p) => offered.has(p)) ?? false,
  });
  o.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const request = parseExecRequest(url);
    if (!request) return refuse(socket, 501, 'only exec is implemented by the cairn local kubelet');
    const found = o.lookup(request);
    if (!found.ok) return refuse(socket, found.status, found.message);
    wss.handleUpgrade(req, socket, head, (ws) => {
      void found.target.ready.then((ok) => {
        if (ok) return runExec({ ws, request, target: found.target, log: o.log });
        ws.send(Buffer.concat([Buffer.from([CHANNEL.error]), Buffer.from(JSON.stringify({ metadata: {}, status: 'Failure', message: 'container is not running', reason: 'BadRequest' }))]));
        ws.close(1000);
      });
    });
  });
}

function runExec(o: { ws: WebSocket; request: ExecRequest; target: ExecTarget; log: Logger }): void {
  const { ws, request: r, target: t } = o;
  const args = ['--target', String(t.pid), '--mount', '--wd'];
  if (t.runAsUser !== undefined) args.push(`--setuid=${t.runAsUser}`);
  if (t.runAsGroup !== undefined || t.runAsUser !== undefined) args.push(`--setgid=${t.runAsGroup ?? t.runAsUser ?? 0}`);
  const child = spawn('nsenter', [...args, '--', ...t.argv], {
    env: Object.fromEntries(t.env),
    stdio: [r.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const send = (channel: number, data: Buffer) => {
    if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([channel]), data]));
  };
  // With a TTY there is one output stream.
  const errChannel = r.tty ? CHANNEL.stdout : CHANNEL.stderr;
  child.stdout?.on('data', (c: Buffer) => r.stdout && send(CHANNEL.stdout, c));
  child.stderr?.on('data', (c: Buffer) => (r.stderr || r.tty) && send(errChannel, c));
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary || data.length === 0) return;
    const channel = data[0];
    if (channel === CHANNEL.stdin) child.stdin?.write(data.subarray(1));
    else if (channel === CHANNEL.close && data[1] === CHANNEL.stdin) child.stdin?.end();
  });
  child.stdin?.on('error', () => undefined);
  ws.on('close', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  child.on('error', (err) => {
    send(CHANNEL.error, Buffer.from(JSON.stringify({ metadata: {}, status: 'Failure', message: err.message, reason: 'InternalError' })));
    ws.close(1000);
  });
  child.on('close', (code, signal) => {
    const exitCode = code ?? 128 + (signal === 'SIGKILL' ? 9 : 15);
    o.log.info({ pod: `${r.namespace}/${r.pod}`, container: r.container, exitCode }, 'exec finished');
    send(CHANNEL.error, Buffer.from(JSON.stringify(exitStatus(exitCode, r.command))));
    ws.close(1000);
  });
}
