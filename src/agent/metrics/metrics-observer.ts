/**
 * Feeds the node agent's metrics from observed state: the data-path controllers hand every watch event of their
 * CRs here; what each change means is decided in ./metrics-decisions.ts.
 */
import type { Logger } from '../../base/logger.js';
import type { MetricsRegistry } from '../../base/metrics.js';
import type { WatchEventType } from '../../kube/informer.js';
import type { DataPathObject } from '../controllers/data-path-decisions.js';
import type { DataPathKind } from '../exposer/hosting-pod.js';
import { dataPathEffects, nodeInitEffects, seenOf, type DataPathSeen } from './metrics-decisions.js';

export type DataPathObserver = (kind: DataPathKind, type: WatchEventType, obj: DataPathObject) => void;

export function nodeMetricsObserver(opts: { metrics: MetricsRegistry; node: string; logger: Logger }): DataPathObserver {
  const seen = new Map<string, DataPathSeen>();
  opts.metrics.apply(nodeInitEffects(opts.node));
  return (kind, type, obj) => {
    const key = `${kind}/${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
    if (type === 'delete') {
      seen.delete(key);
      return;
    }
    const prev = seen.get(key);
    seen.set(key, seenOf(obj));
    try {
      opts.metrics.apply(dataPathEffects({ kind, node: opts.node, prev, next: obj }));
    } catch (err) {
      // A metrics failure (a bug) is logged; it never stops the watch that carried the event.
      opts.logger.error({ err: (err as Error).message }, 'could not update metrics');
    }
  };
}
