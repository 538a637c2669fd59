/**
 * The data mover's log, collected from its pod when it ends and written into the node-agent's own log between
 * Velero's begin/end markers, each line marked with `log-source` (`<pod>/<container>`), so one `kubectl logs` on
 * the node-agent tells the whole story of a volume even after the hosting pod is gone. JSON lines (the data mover
 * logs in the node-agent's format) are re-emitted with their fields; others as plain messages.
 */
import type { Logger } from '../../base/logger.js';

/** At most this many lines are merged (the tail), so a chatty data mover cannot flood the node-agent's log. */
export const MAX_MERGED_LINES = 5000;

export const beginMarker = (source: string) => `***************************begin pod logs[${source}]***************************`;
export const endMarker = (source: string) => `***************************end pod logs[${source}]***************************`;

const PINO_LEVELS: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

export function mergeLog(logger: Logger, source: string, text: string): void {
  let lines = text.split('\n').filter((l) => l.trim() !== '');
  const dropped = Math.max(0, lines.length - MAX_MERGED_LINES);
  if (dropped) lines = lines.slice(-MAX_MERGED_LINES);
  const log = logger.child({ 'log-source': source });
  log.info(beginMarker(source));
  if (dropped) log.info({ droppedLines: dropped }, 'earlier lines of the data mover log left out');
  for (const line of lines) {
    let rec: Record<string, unknown> | undefined;
    if (line.startsWith('{')) {
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        rec = undefined;
      }
    }
    if (rec && typeof rec.msg === 'string') {
      // `component` is the data mover's own; log-source already says where the line comes from.
      const { level, msg, time, pid: _pid, hostname: _hostname, component: _component, ...fields } = rec;
      const name = PINO_LEVELS[Number(level)] ?? 'info';
      log[name]({ ...fields, ...(typeof time === 'number' ? { sourceTime: new Date(time).toISOString() } : {}) }, msg);
    } else {
      log.info(line);
    }
  }
  log.info(endMarker(source));
}
