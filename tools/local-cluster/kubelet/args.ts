/**
 * Command-line flags of the local kubelet (`--flag value` or `--flag=value`), checked up front so a wrong
 * invocation fails with one clear line instead of half a node.
 */
import { parseArgs } from 'node:util';

export interface KubeletArgs {
  kubeconfig: string;
  nodeName: string;
  nodeIp: string;
  rootDir: string;
  port: number;
  tlsCertFile: string;
  tlsKeyFile: string;
  caFile: string;
  apiServer: URL;
  logFile?: string | undefined;
  backoffInitialMs: number;
  backoffMaxMs: number;
}

export const KUBELET_USAGE =
  'usage: main.ts --kubeconfig <file> --node-name <name> --node-ip <ip> --root-dir <dir> --port <port> ' +
  '--tls-cert-file <file> --tls-key-file <file> --ca-file <file> --api-server <https://host:port> [--log-file <file>] ' +
  '[--backoff-initial-ms 1000] [--backoff-max-ms 30000]';

export function parseKubeletArgs(argv: string[]): KubeletArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      kubeconfig: { type: 'string' },
      'node-name': { type: 'string' },
      'node-ip': { type: 'string' },
      'root-dir': { type: 'string' },
      port: { type: 'string' },
      'tls-cert-file': { type: 'string' },
      'tls-key-file': { type: 'string' },
      'ca-file': { type: 'string' },
      'api-server': { type: 'string' },
      'log-file': { type: 'string' },
      'backoff-initial-ms': { type: 'string' },
      'backoff-max-ms': { type: 'string' },
    },
    strict: true,
  });
  const need = (k: keyof typeof values): string => {
    const v = values[k];
    if (typeof v !== 'string' || v === '') throw new Error(`--${k} is required\n${KUBELET_USAGE}`);
    return v;
  };
  const port = Number(need('port'));
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`--port must be a TCP port, got ${values.port ?? ''}`);
  let apiServer: URL;
  try {
    apiServer = new URL(need('api-server'));
  } catch {
    throw new Error(`--api-server must be a URL like https://127.0.0.1:6443, got ${values['api-server'] ?? ''}`);
  }
  const ms = (k: 'backoff-initial-ms' | 'backoff-max-ms', dflt: number) => {
    const v = values[k];
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${k} must be a number of milliseconds`);
    return n;
  };
  return {
    kubeconfig: need('kubeconfig'),
    nodeName: need('node-name'),
    nodeIp: need('node-ip'),
    rootDir: need('root-dir'),
    port,
    tlsCertFile: need('tls-cert-file'),
    tlsKeyFile: need('tls-key-file'),
    caFile: need('ca-file'),
    apiServer,
    logFile: values['log-file'],
    backoffInitialMs: ms('backoff-initial-ms', 1000),
    backoffMaxMs: ms('backoff-max-ms', 30_000),
  };
}

/** Host and port of the API server as pods see it (KUBERNETES_SERVICE_HOST/PORT). */
export function apiServerAddress(url: URL): { host: string; port: number } {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : url.protocol === 'http:' ? 80 : 443;
  return { host, port };
}
