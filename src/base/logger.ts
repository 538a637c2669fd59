/**
 * One structured logger, always to stderr (stdout is for command output). `--log-format json` writes pino's
 * JSON lines; `text` writes `time level msg key=value ...`. Keys that could carry secrets are redacted.
 */
import { Writable } from 'node:stream';
import { pino, type Logger, type DestinationStream } from 'pino';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export type { Logger };

/** Paths pino replaces with "[redacted]" wherever they appear in a log record. */
export const REDACT_PATHS = [
  'password', '*.password', 'secret', '*.secret', 'token', '*.token', 'accessKey', '*.accessKey',
  'secretAccessKey', '*.secretAccessKey', 'credentials', '*.credentials', 'authorization', '*.authorization',
  'headers.authorization', 'data', '*.data',
];

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

function formatValue(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/** One pino JSON line as its record, or undefined when the line is not JSON. */
export function parseLogRecord(jsonLine: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Turns pino JSON lines into human-readable lines. */
export function textLine(jsonLine: string): string {
  const rec = parseLogRecord(jsonLine);
  if (rec === undefined) return jsonLine;
  const { time, level, msg, pid: _pid, hostname: _host, ...rest } = rec;
  const when = typeof time === 'number' ? new Date(time).toISOString() : '';
  const lvl = LEVEL_NAMES[Number(level)] ?? String(level);
  const fields = Object.entries(rest).map(([k, v]) => `${k}=${formatValue(v)}`);
  return [when, lvl.padEnd(5), String(msg ?? ''), ...fields].filter(Boolean).join(' ');
}

class TextStream extends Writable {
  private pending = '';
  constructor(private readonly out: NodeJS.WritableStream) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null) => void): void {
    this.pending += chunk.toString('utf8');
    let nl: number;
    while ((nl = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, nl);
      this.pending = this.pending.slice(nl + 1);
      if (line) this.out.write(textLine(line) + '\n');
    }
    done();
  }
}

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  /** Where lines go; stderr unless a test passes its own sink. */
  destination?: NodeJS.WritableStream;
  /** Fixed fields on every line, e.g. {component: 'node-agent'}. */
  bindings?: Record<string, string>;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const out = opts.destination ?? process.stderr;
  const stream = (opts.format ?? 'text') === 'json' ? out : new TextStream(out);
  const logger = pino(
    { level: opts.level ?? 'info', base: undefined, redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    stream as DestinationStream,
  );
  return opts.bindings ? logger.child(opts.bindings) : logger;
}
