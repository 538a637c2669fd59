/**
 * One running plugin binary: started with go-plugin's handshake, talked to over gRPC on the socket it names, its
 * stderr (Velero's JSON log lines) and the stdio it streams after the handshake handed to a log callback, stopped
 * with go-plugin's Shutdown call (then SIGKILL if it lingers). Calls in flight fail with the plugin's last words
 * when the process ends under them, instead of waiting for a channel that will never answer.
 */
import * as grpc from '@grpc/grpc-js';
import { spawn, type ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { PluginExitedError, PluginStartError, fromGrpcError } from './errors.js';
import { grpcTarget, parseHandshakeLine, pluginEnvironment, HandshakeError } from './handshake.js';
import type { Empty, StdioData } from './messages.js';
import { parsePluginLogLine, type PluginLogLine } from './plugin-log.js';
import { pluginServices, type PluginServices } from './proto.js';

export interface PluginProcessOptions {
  /** The binary (absolute path). */
  command: string;
  /** Arguments, e.g. `--log-level=info` (Velero passes its server flags; the framework ignores unknown ones). */
  args?: readonly string[];
  /** The environment before the handshake's variables are added (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Each line the plugin logs, parsed. */
  onLog: (line: PluginLogLine) => void;
  /** How long the handshake may take (go-plugin's default: one minute). */
  startTimeoutMs?: number;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Lines of stderr kept to explain an exit. */
const TAIL_LINES = 20;
const DEFAULT_START_TIMEOUT_MS = 60_000;
/** How long a plugin gets to exit after Shutdown before it is killed (go-plugin waits two seconds). */
const SHUTDOWN_GRACE_MS = 2_000;
/** How long a failed call waits to see whether the process is exiting (then the exit is the error). */
const EXIT_NOTICE_MS = 500;

export class PluginProcess {
  readonly name: string;
  private readonly clients = new Map<keyof PluginServices, grpc.Client>();
  private exit: ExitInfo | undefined;
  private readonly exited: Promise<ExitInfo>;
  /** Rejecters of the calls in flight, told when the process exits. */
  private readonly inFlight = new Set<(e: ExitInfo) => void>();
  private stdio: grpc.ClientReadableStream<StdioData> | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly target: string,
    exited: Promise<ExitInfo>,
    /** The last lines of stderr, kept to explain an exit. */
    private readonly tail: readonly string[],
  ) {
    this.name = basename(child.spawnfile);
    this.exited = exited.then((e) => {
      this.exit = e;
      for (const reject of this.inFlight) reject(e);
      this.inFlight.clear();
      return e;
    });
  }

  static async start(opts: PluginProcessOptions): Promise<PluginProcess> {
    const name = basename(opts.command);
    const child = spawn(opts.command, [...(opts.args ?? [])], { env: pluginEnvironment(opts.env ?? process.env), stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const exited = new Promise<ExitInfo>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const spawnError = new Promise<never>((_, reject) => child.once('error', (err) => reject(new PluginStartError(`cannot start plugin ${opts.command}: ${err.message}`, name, { cause: err }))));
    createInterface({ input: child.stderr! }).on('line', (raw) => {
      const line = parsePluginLogLine(raw);
      if (!line) return;
      remember(tail, raw, line);
      opts.onLog(line);
    });
    const stdout = createInterface({ input: child.stdout! });
    const firstLine = new Promise<string>((resolve) => stdout.once('line', resolve));
    // After the handshake go-plugin writes nothing else to stdout; anything that does appear is drained.
    const timeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PluginStartError(`plugin ${opts.command} did not complete the handshake within ${Math.round(timeoutMs / 1000)}s`, name)), timeoutMs);
    });
    const diedEarly = exited.then((e) => {
      throw new PluginStartError(`plugin ${opts.command} exited before the handshake (${describeExit(e)})${lastWords(tail)}`, name);
    });
    try {
      const line = await Promise.race([firstLine, timeout, diedEarly, spawnError]);
      const addr = parseHandshakeLine(line);
      const proc = new PluginProcess(child, grpcTarget(addr), exited, tail);
      proc.followStdio(opts.onLog, tail);
      return proc;
    } catch (err) {
      child.kill('SIGKILL');
      if (err instanceof HandshakeError) throw new PluginStartError(`plugin ${opts.command}: ${err.message}${lastWords(tail)}`, name, { cause: err });
      throw err;
    } finally {
      clearTimeout(timer);
      // Unhandled otherwise when the handshake won the race.
      diedEarly.catch(() => undefined);
      spawnError.catch(() => undefined);
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process has ended (a restartable process starts a new one on the next call). */
  get hasExited(): boolean {
    return this.exit !== undefined;
  }

  /** A client of one of the plugin's services over the process's socket (one channel per service, made once). */
  client(service: keyof PluginServices): grpc.Client {
    let c = this.clients.get(service);
    if (!c) {
      const Ctor = pluginServices()[service];
      c = new Ctor(this.target, grpc.credentials.createInsecure(), {
        // go-plugin lifts gRPC's message size limits; Velero sends whole objects (items, backups) in one message.
        'grpc.max_receive_message_length': -1,
        'grpc.max_send_message_length': -1,
      });
      this.clients.set(service, c);
    }
    return c;
  }

  /**
   * Settles with `call`, or fails with PluginExitedError (and the plugin's last stderr lines) if the process ends
   * first: a crash mid-call fails the call at once instead of leaving it waiting. Calls in flight are kept in a set
   * (not as reactions on the exit promise), so a long session of calls holds nothing for the ones done.
   */
  guard<T>(call: Promise<T>, method: string): Promise<T> {
    const exitError = (e: ExitInfo) => new PluginExitedError(`plugin ${this.name} exited during ${method} (${describeExit(e)})${lastWords(this.tail)}`, this.name);
    if (this.exit) {
      call.catch(() => undefined);
      return Promise.reject(exitError(this.exit));
    }
    return new Promise<T>((resolve, reject) => {
      const onExit = (e: ExitInfo) => reject(exitError(e));
      this.inFlight.add(onExit);
      call.then(
        (value) => {
          this.inFlight.delete(onExit);
          resolve(value);
        },
        (err: unknown) => {
          // A dying process drops the connection just before its exit is seen: when it does exit at once, that is
          // the failure to report (with its last words), not "connection dropped" (onExit then rejects).
          const timer = setTimeout(() => {
            this.inFlight.delete(onExit);
            reject(err);
          }, EXIT_NOTICE_MS);
          timer.unref();
          if (this.exit) {
            clearTimeout(timer);
            onExit(this.exit);
          }
        },
      );
    });
  }

  /** go-plugin's orderly stop: Shutdown, a short wait, then SIGKILL. Safe to call more than once. */
  async stop(): Promise<void> {
    if (!this.hasExited) {
      const controller = this.client('GRPCController');
      await new Promise<void>((resolve) => {
        (controller as unknown as { Shutdown: (req: Empty, opts: grpc.CallOptions, cb: () => void) => void }).Shutdown({}, { deadline: Date.now() + SHUTDOWN_GRACE_MS }, () => resolve());
      });
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_GRACE_MS)));
      await Promise.race([this.exited, grace]);
      clearTimeout(timer);
      if (!this.hasExited) {
        this.child.kill('SIGKILL');
        await this.exited;
      }
    }
    this.stdio?.cancel();
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  /** What the plugin writes to os.Stdout/os.Stderr after the handshake arrives over go-plugin's stdio stream. */
  private followStdio(onLog: (line: PluginLogLine) => void, tail: string[]): void {
    const client = this.client('GRPCStdio') as unknown as { StreamStdio: (req: Empty) => grpc.ClientReadableStream<StdioData> };
    const stream = client.StreamStdio({});
    this.stdio = stream;
    let pending = '';
    stream.on('data', (chunk: StdioData) => {
      pending += chunk.data.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const raw = pending.slice(0, nl);
        const line = parsePluginLogLine(raw);
        pending = pending.slice(nl + 1);
        if (!line) continue;
        remember(tail, raw, line);
        onLog({ ...line, fields: { ...line.fields, stream: chunk.channel === 'STDOUT' ? 'stdout' : 'stderr' } });
      }
    });
    // The stream ends with the process (or is cancelled by stop()); a plugin without the service just has no stdio.
    stream.on('error', () => undefined);
  }

  /** For error messages built outside: the plugin's name and how a gRPC failure reads. */
  callError(err: unknown, method: string, timeoutMs: number): Error {
    return fromGrpcError(err, this.name, method, timeoutMs);
  }
}

function describeExit(e: ExitInfo): string {
  return e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
}

/**
 * Keeps what may explain an exit: raw output (a Go panic, a message printed before os.Exit) and error records;
 * the plugin's ordinary log records say nothing about why it died.
 */
function remember(tail: string[], raw: string, line: PluginLogLine): void {
  const record = raw.startsWith('{') && line.message !== raw;
  if (record && line.level !== 'error') return;
  tail.push(line.message);
  if (tail.length > TAIL_LINES) tail.shift();
}

/** The plugin's last words: from its last panic or fatal error line when there is one, else its last lines. */
function lastWords(tail: readonly string[]): string {
  const fatal = tail.findLastIndex((l) => /^(panic|fatal error): /.test(l));
  const words = (fatal >= 0 ? tail.slice(fatal, fatal + 2) : tail.slice(-3)).join(' | ').trim();
  return words ? `: ${words}` : '';
}
