/**
 * Options for runRestore in unit tests: a Restore `r1` of backup `b1`, an empty archive, the built-in restore actions,
 * no volume information, a silent log and short timeouts. Each test passes its fake cluster and what it changes.
 */
import { newBackup, newRestore } from '../../src/api/index.js';
import { ResultsCollector } from '../../src/api/results.js';
import { createLogger } from '../../src/base/logger.js';
import type { Kube } from '../../src/kube/client.js';
import { ItemActionRegistry } from '../../src/plugins/item-actions/registry.js';
import { registerBuiltinRestoreActions } from '../../src/server/item-actions/builtin.js';
import type { RunRestoreOptions } from '../../src/server/restore/restorer.js';

export function restoreRunOptions(overrides: Partial<RunRestoreOptions> & Pick<RunRestoreOptions, 'client'>): RunRestoreOptions {
  return {
    restore: newRestore({ name: 'r1', spec: { backupName: 'b1' } }),
    backup: newBackup({ name: 'b1' }),
    archive: { items: [], warnings: [] },
    volumeInfos: [],
    kube: {} as Kube,
    registry: registerBuiltinRestoreActions(new ItemActionRegistry()),
    log: createLogger({ level: 'fatal' }),
    results: new ResultsCollector(),
    resourceTimeoutMs: 1000,
    pollIntervalMs: 1,
    ...overrides,
  };
}
