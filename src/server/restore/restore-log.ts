/**
 * The log of one restore: lines in Velero's logrus text format kept in memory (uploaded as
 * `restore-<name>-logs.gz` when the restore ends) and also sent to the server's log. Object contents are never
 * logged, only kinds and names.
 */
import type { Logger } from '../../base/logger.js';
import { createOperationLog } from '../operation-log.js';

export interface RestoreLog {
  logger: Logger;
  text(): string;
}

export function createRestoreLog(opts: { restore: string; server: Logger }): RestoreLog {
  const log = createOperationLog({ bindings: { restore: opts.restore } });
  const own = log.logger;
  const server = opts.server.child({ restore: opts.restore });
  // Each call goes to both loggers; the pino API is wide, so only the level methods used here are forwarded.
  const both = new Proxy(own, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && ['info', 'warn', 'error', 'debug'].includes(prop)) {
        return (...args: unknown[]) => {
          (target[prop as 'info'] as (...a: unknown[]) => void)(...args);
          (server[prop as 'info'] as (...a: unknown[]) => void)(...args);
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return { logger: both, text: log.text };
}
