/**
 * A KubeConfig whose requests share kept-alive connections. client-node builds a new undici Agent for every request
 * of its generated clients (`applySecurityAuthentication` → a dispatcher of its own), and gives requests made with
 * node:https (`applyToHTTPSOptions`: the restore's dynamic client, the backup's item reader, downloads) an
 * https.Agent without keep-alive, so each API call opened its own TCP connection and TLS handshake: ~7-9 ms and ~4 ms
 * of CPU per call on this machine instead of ~2.5 ms and ~1 ms on a kept-alive connection, paid thousands of times by
 * a backup or restore of many items. Here one dispatcher and one keep-alive https.Agent made for a cluster and user
 * serve every later request for the same pair, as client-go keeps one transport per TLS configuration.
 *
 * Not pooled: a user whose credentials come from an exec plugin, which may hand out a new client certificate on any
 * request (a connection made with the old one would outlive its rotation).
 */
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

export class PooledKubeConfig extends KubeConfig {
  private pool: { key: string; dispatcher: Dispatcher } | undefined;
  private agent: { key: string; agent: HttpsAgent } | undefined;

  override async applyToHTTPSOptions(opts: Parameters<KubeConfig['applyToHTTPSOptions']>[0]): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    const key = this.poolKey();
    const cluster = this.getCurrentCluster();
    // Plain HTTP and proxies keep the agent client-node chose for them.
    if (key === undefined || !cluster?.server.startsWith('https:') || cluster.proxyUrl) return;
    if (this.agent?.key !== key) {
      // The TLS options client-node put on the request (CA, client certificate, server name...), as it gives them to
      // its own agent. An agent replaced here (another context) is dropped, not destroyed: requests still on it end
      // normally.
      const { ca, cert, key: privateKey, pfx, passphrase, rejectUnauthorized, servername } = opts as AgentOptions;
      const tls: AgentOptions = { ca, cert, key: privateKey, pfx, passphrase, servername };
      if (rejectUnauthorized !== undefined) tls.rejectUnauthorized = rejectUnauthorized;
      this.agent = { key, agent: new HttpsAgent({ ...tls, keepAlive: true }) };
    }
    opts.agent = this.agent.agent;
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const made = context.getDispatcher();
    const key = this.poolKey();
    if (!made || key === undefined) return;
    if (this.pool?.key === key) {
      context.setDispatcher(this.pool.dispatcher);
      return;
    }
    // The cluster or user changed (another context): later requests use the new pool; the old one's connections
    // close once their requests end.
    const old = this.pool?.dispatcher;
    this.pool = { key, dispatcher: made };
    if (old) void old.close().catch(() => undefined);
  }

  /** What the pooled connections were made for: the current cluster and user; undefined when they must not be pooled. */
  private poolKey(): string | undefined {
    const user = this.getCurrentUser();
    if (user?.exec) return undefined;
    return JSON.stringify([this.currentContext, this.getCurrentCluster(), user]);
  }
}
