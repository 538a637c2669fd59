/**
 * Asks the running server for its version and plugins the way Velero's CLI does: create a ServerStatusRequest and
 * wait for the server to mark it Processed.
 */
import { Kinds, ServerStatusRequestPhase, newServerStatusRequest, parseServerStatusRequest, type ServerStatusRequest } from '../api/index.js';
import type { Kube } from '../kube/client.js';
import { customClient } from '../kube/custom.js';
import { pollUntil } from '../kube/wait.js';

export interface ServerStatus {
  version: string;
  plugins: { name: string; kind: string }[];
}

export async function serverStatus(kube: Kube, opts: { namespace: string; timeoutMs: number }): Promise<ServerStatus> {
  const client = customClient<ServerStatusRequest>(kube, Kinds.ServerStatusRequest, parseServerStatusRequest);
  const created = await client.create(newServerStatusRequest({ namespace: opts.namespace, generateName: 'cairn-cli-' }));
  const name = created.metadata.name ?? '';
  try {
    const status = await pollUntil(
      async () => {
        const ssr = await client.get(opts.namespace, name);
        const done = ssr?.status?.phase === ServerStatusRequestPhase.Processed;
        return { done, value: { version: ssr?.status?.serverVersion ?? '', plugins: ssr?.status?.plugins ?? [] }, state: ssr?.status?.phase ?? 'New' };
      },
      { what: 'the server to answer (is the cairn server running?)', timeoutMs: opts.timeoutMs, intervalMs: 250 },
    );
    return status ?? { version: '', plugins: [] };
  } finally {
    await client.delete(opts.namespace, name).catch(() => false);
  }
}

export async function serverVersion(kube: Kube, opts: { namespace: string; timeoutMs: number }): Promise<string> {
  return (await serverStatus(kube, opts)).version;
}
