/** A ServerContext for controller unit tests: the fake API server, a quiet logger, the default config, a fake clock. */
import { createLogger } from '../../src/base/logger.js';
import { DEFAULT_SERVER_CONFIG, type ServerConfig, type ServerContext } from '../../src/server/context.js';
import { FakeClock } from './fake-clock.js';
import type { FakeKube } from './fake-kube.js';

export const NAMESPACE = 'velero';

export function serverContext(fake: FakeKube, opts: { clock?: FakeClock; config?: Partial<ServerConfig> } = {}): ServerContext & { clock: FakeClock } {
  const clock = opts.clock ?? new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  return {
    kube: fake.kube(),
    namespace: NAMESPACE,
    logger: createLogger({ level: 'fatal' }),
    version: 'test',
    config: { ...DEFAULT_SERVER_CONFIG, ...opts.config },
    now: clock.date,
    clock,
  };
}
