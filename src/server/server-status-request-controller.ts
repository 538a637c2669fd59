/**
 * Answers ServerStatusRequests (`cairn version` and `plugin get` ask the server this way, as Velero does):
 * New → Processed with the server version and its plugins (Velero's kinds and names), and removes processed
 * requests after a minute so they do not pile up.
 */
import {
  Kinds,
  ServerStatusRequestPhase,
  parseServerStatusRequest,
  type ServerStatusRequest,
  statusTime,
} from '../api/index.js';
import type { ServerContext } from './context.js';
import { customClient } from '../kube/custom.js';
import { startCustomController, type ObjectKey, type ReconcileResult, type RunningController } from '../kube/controller.js';
import { registerBuiltinActions } from './item-actions/builtin.js';
import { serverPluginList } from './plugins.js';
import { ItemActionRegistry } from '../plugins/item-actions/registry.js';

export const PROCESSED_TTL_MS = 60_000;

export type ServerStatusRequestControllerOptions = Pick<ServerContext, 'kube' | 'namespace' | 'logger' | 'version'> & {
  now?: () => Date;
  /** What the server runs (built-ins and external plugins); the built-ins when not given. */
  plugins?: () => { name: string; kind: string }[];
};

export function serverStatusRequestReconciler(opts: ServerStatusRequestControllerOptions) {
  const client = customClient<ServerStatusRequest>(opts.kube, Kinds.ServerStatusRequest, parseServerStatusRequest);
  const now = opts.now ?? (() => new Date());
  const plugins = opts.plugins ?? (() => serverPluginList(undefined, registerBuiltinActions(new ItemActionRegistry())));
  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    const ssr = await client.get(key.namespace, key.name);
    if (!ssr) return;
    const phase = ssr.status?.phase ?? ServerStatusRequestPhase.New;
    if (phase === ServerStatusRequestPhase.New) {
      await client.updateStatus(key.namespace, key.name, (o) => {
        if (o.status?.phase === ServerStatusRequestPhase.Processed) return false;
        o.status = { phase: ServerStatusRequestPhase.Processed, processedTimestamp: statusTime(now()), serverVersion: opts.version, plugins: plugins() };
      });
      return { requeueAfterMs: PROCESSED_TTL_MS };
    }
    const processedAt = ssr.status?.processedTimestamp ? Date.parse(ssr.status.processedTimestamp) : 0;
    const age = now().getTime() - processedAt;
    if (age >= PROCESSED_TTL_MS) {
      await client.delete(key.namespace, key.name);
      return;
    }
    return { requeueAfterMs: PROCESSED_TTL_MS - age };
  };
}

export async function startServerStatusRequestController(opts: ServerStatusRequestControllerOptions): Promise<RunningController<ServerStatusRequest>> {
  const client = customClient<ServerStatusRequest>(opts.kube, Kinds.ServerStatusRequest, parseServerStatusRequest);
  return startCustomController<ServerStatusRequest>(opts, client, {
    name: 'server-status-request',
    reconcile: serverStatusRequestReconciler(opts),
  });
}
