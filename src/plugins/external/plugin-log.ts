/**
 * A plugin's stderr, line by line. Velero's plugins log with logrus's JSON formatter shaped for go-plugin's host
 * (hclog): `@message`, `@level` (trace/debug/info/warn/error), no timestamp, the fields of the log call, and
 * `logSource` (file:line in the plugin). Other lines (a panic, a library writing to stderr) are kept as they are,
 * at the level their `[LEVEL]` prefix names, else debug, as go-plugin does.
 */
import { basename } from 'node:path';
import type { Logger } from '../../base/logger.js';

export type PluginLogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface PluginLogLine {
  level: PluginLogLevel;
  message: string;
  fields: Record<string, unknown>;
}

const LEVELS: Record<string, PluginLogLevel> = { trace: 'trace', debug: 'debug', info: 'info', warn: 'warn', warning: 'warn', error: 'error', fatal: 'error', panic: 'error' };
/** Fields that only mean something to go-plugin or that the host's logger writes itself. */
const DROPPED = new Set(['@message', '@level', '@timestamp', '@module', '@logSourceSetBy', 'time', 'timestamp', 'level', 'msg']);

export function parsePluginLogLine(raw: string): PluginLogLine | undefined {
  const line = raw.replace(/\r$/, '');
  if (!line.trim()) return undefined;
  if (line.startsWith('{')) {
    try {
      const rec = JSON.parse(line) as Record<string, unknown>;
      const level = LEVELS[String(rec['@level'] ?? '').toLowerCase()];
      // JSON without hclog's level is not a log record: kept verbatim at debug, as go-plugin does.
      if (level && typeof rec['@message'] === 'string') {
        const fields = Object.fromEntries(Object.entries(rec).filter(([k]) => !DROPPED.has(k)));
        return { level, message: rec['@message'], fields };
      }
    } catch {
      /* not JSON after all */
    }
  }
  const prefixed = /^\[(TRACE|DEBUG|INFO|WARN|ERROR)\]/.exec(line);
  return { level: prefixed ? (prefixed[1]!.toLowerCase() as PluginLogLevel) : 'debug', message: line, fields: {} };
}

/** Writes one plugin log line to each logger, with the binary's name (`pluginName`) and path (`cmd`), as Velero does. */
export function forwardPluginLog(logs: readonly Logger[], command: string, line: PluginLogLine): void {
  const fields = { ...line.fields, pluginName: basename(command), cmd: command };
  for (const log of logs) log[line.level](fields, line.message);
}
