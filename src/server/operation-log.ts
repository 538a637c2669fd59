/**
 * The in-memory log of one backup or restore, in Velero's logrus text format (api/operation-log.ts), uploaded as
 * `<backup>-logs.gz` / `restore-<name>-logs.gz` when the operation ends. Code logs through an ordinary pino logger
 * (secrets redacted as everywhere); each record is turned into one logrus line. pino's `err` field becomes logrus's
 * `error` field (its message), as Velero's `WithError` writes it.
 */
import { Writable } from 'node:stream';
import { formatLogrusLine, type LogrusLevel } from '../api/index.js';
import { createLogger, parseLogRecord, type Logger } from '../base/logger.js';

export interface OperationLog {
  logger: Logger;
  /** Everything logged so far, one line per entry, newline-terminated. */
  text(): string;
}

const LEVELS: Record<number, LogrusLevel> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };

/** One pino JSON record as a logrus line; a line that is not a JSON record is kept as it is. */
export function logrusLineOf(jsonLine: string): string {
  const rec = parseLogRecord(jsonLine);
  if (rec === undefined) return jsonLine;
  const { time, level, msg, err, pid: _pid, hostname: _host, ...rest } = rec;
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries(rest)) fields[k] = fieldText(v);
  if (err !== undefined) fields.error = errorText(err);
  return formatLogrusLine({
    time: new Date(typeof time === 'number' ? time : Date.now()),
    level: LEVELS[Number(level)] ?? 'info',
    msg: typeof msg === 'string' ? msg : '',
    fields,
  });
}

/** A field value as Go's fmt.Sprint prints the same value: lists as `[a b]`, maps as `map[k:v]` (keys sorted). */
function fieldText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return `[${v.map(fieldText).join(' ')}]`;
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([k, x]) => `${k}:${fieldText(x)}`).join(' ')}]`;
  }
  return String(v as string);
}

function errorText(err: unknown): string {
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') return (err as { message: string }).message;
  return fieldText(err);
}

export function createOperationLog(opts: { bindings: Record<string, string>; level?: 'debug' | 'info'; onLine?: (jsonLine: string) => void }): OperationLog {
  const lines: string[] = [];
  let pending = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const raw = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (!raw) continue;
        lines.push(logrusLineOf(raw));
        opts.onLine?.(raw);
      }
      done();
    },
  });
  const logger = createLogger({ level: opts.level ?? 'info', format: 'json', destination: sink, bindings: opts.bindings });
  return { logger, text: () => (lines.length ? `${lines.join('\n')}\n` : '') };
}
