/**
 * The log of one backup: what gets uploaded as `<name>-logs.gz`. Lines are text (`time level msg key=value`),
 * captured in memory for the backup's lifetime and mirrored to the server log at warn level and above, so an
 * operator watching the server sees problems without downloading the file. Item contents are never logged.
 */
import { Writable } from 'node:stream';
import { createLogger, textLine, type Logger } from '../../base/logger.js';

export interface BackupLog {
  logger: Logger;
  /** Everything logged so far, one line per entry, newline-terminated. */
  text(): string;
}

const WARN = 40;

export function createBackupLog(opts: { backup: string; server?: Logger; level?: 'debug' | 'info' }): BackupLog {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const raw of chunk.toString('utf8').split('\n')) {
        if (!raw) continue;
        lines.push(textLine(raw));
        if (opts.server) mirror(opts.server, raw);
      }
      done();
    },
  });
  const logger = createLogger({ level: opts.level ?? 'info', format: 'json', destination: sink, bindings: { backup: opts.backup } });
  return { logger, text: () => (lines.length ? `${lines.join('\n')}\n` : '') };
}

function mirror(server: Logger, raw: string): void {
  try {
    const rec = JSON.parse(raw) as { level?: number; msg?: string; [k: string]: unknown };
    if ((rec.level ?? 0) < WARN) return;
    const { level, msg, time: _t, ...fields } = rec;
    if ((level ?? 0) >= 50) server.error(fields, msg ?? '');
    else server.warn(fields, msg ?? '');
  } catch {
    /* not JSON: nothing to mirror */
  }
}
