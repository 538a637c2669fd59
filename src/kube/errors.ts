/**
 * Turns client-node failures into cairn's typed errors with one clear line: unreachable clusters become
 * ClusterError naming the server, 404 becomes NotFoundError, 401/403 say who may not do what. Response bodies are
 * reduced to the API server's `message`, which never carries secret data.
 */
import { ApiException } from '@kubernetes/client-node';
import { CairnError, ClusterError, NotFoundError } from '../base/errors.js';

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EHOSTUNREACH: 'host unreachable',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the server certificate is self-signed and not trusted',
  SELF_SIGNED_CERT_IN_CHAIN: 'the server certificate is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the server certificate is not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the server certificate does not match the host',
  CERT_HAS_EXPIRED: 'the server certificate has expired',
};

function networkReason(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES[code]) return NETWORK_CODES[code];
    e = (e as { cause?: unknown }).cause;
  }
  if (err instanceof TypeError && err.message === 'fetch failed') return 'request failed';
  return undefined;
}

/** The HTTP status of an API error, or undefined for anything else. */
export function statusCode(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (err: unknown): boolean => statusCode(err) === 404;
export const isConflict = (err: unknown): boolean => statusCode(err) === 409;
export const isAlreadyExists = isConflict;

/** What `read` answers, or undefined when the object does not exist (404); any other error is thrown. */
export async function undefinedIfNotFound<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

function apiMessage(err: ApiException<unknown>): string {
  const body = err.body;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === 'string') return parsed.message;
    } catch {
      /* not JSON: fall through */
    }
    return body.slice(0, 300);
  }
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  return `HTTP ${err.code}`;
}

/** Maps any error from a Kubernetes call to a CairnError; `what` says what was being done, `server` where. */
export function kubeError(err: unknown, what: string, server?: string): CairnError {
  if (err instanceof CairnError) return err;
  const net = networkReason(err);
  if (net) return new ClusterError(`cannot reach the cluster${server ? ` at ${server}` : ''}: ${net}`, { cause: err });
  if (err instanceof ApiException) {
    const msg = apiMessage(err);
    if (err.code === 404) return new NotFoundError(`${what}: ${msg}`, { cause: err });
    if (err.code === 401) return new ClusterError(`${what}: unauthorized: check the kubeconfig's credentials`, { cause: err });
    if (err.code === 403) return new ClusterError(`${what}: forbidden: ${msg}`, { cause: err });
    return new CairnError(`${what}: ${msg}`, { cause: err });
  }
  return new CairnError(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
