/**
 * The log of one backup: what gets uploaded as `<name>-logs.gz`, in Velero's logrus text format, captured in memory
 * for the backup's lifetime and mirrored to the server log at warn level and above, so an operator watching the
 * server sees problems without downloading the file. Item contents are never logged.
 */
import type { Logger } from '../../base/logger.js';
import { createOperationLog, type OperationLog } from '../operation-log.js';

export type BackupLog = OperationLog;

const WARN = 40;

export function createBackupLog(opts: { backup: string; server?: Logger; level?: 'debug' | 'info' }): BackupLog {
  const server = opts.server;
  return createOperationLog({
    bindings: { backup: opts.backup },
    ...(opts.level ? { level: opts.level } : {}),
    ...(server ? { onLine: (raw: string) => mirror(server, raw) } : {}),
  });
}

function mirror(server: Logger, raw: string): void {
  try {
    const rec = JSON.parse(raw) as { level?: number; msg?: string; [k: string]: unknown };
    if ((rec.level ?? 0) < WARN) return;
    // A plugin's lines reach the server log directly (the plugin session writes to both).
    if ('pluginName' in rec) return;
    const { level, msg, time: _t, ...fields } = rec;
    if ((level ?? 0) >= 50) server.error(fields, msg ?? '');
    else server.warn(fields, msg ?? '');
  } catch {
    /* not JSON: nothing to mirror */
  }
}
