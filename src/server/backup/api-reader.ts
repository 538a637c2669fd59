/**
 * Raw JSON reads from the API server. Backup must store objects exactly as the API returns them (every field,
 * timestamps as strings), which client-node's typed deserialisation does not keep; so lists and gets of arbitrary
 * resources go through here with the kubeconfig's credentials. Transient failures are retried.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ApiException } from '@kubernetes/client-node';
import { retryTransient, type Kube } from '../../kube/client.js';
import { undefinedIfNotFound } from '../../kube/errors.js';

export interface ApiReader {
  /** GET a path; throws ApiException on non-2xx. */
  get<T>(path: string, query?: Record<string, string | number | undefined>): Promise<T>;
  /** GET a path; undefined on 404. */
  tryGet<T>(path: string): Promise<T | undefined>;
}

export function apiReader(kube: Kube): ApiReader {
  const base = new URL(kube.server);

  async function once<T>(path: string, query: Record<string, string | number | undefined>): Promise<T> {
    const url = new URL(path.replace(/^\//, ''), base.href.endsWith('/') ? base.href : `${base.href}/`);
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    const opts: RequestOptions & { headers: Record<string, string> } = {
      method: 'GET',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      headers: { Accept: 'application/json' },
    };
    await kube.config.applyToHTTPSOptions(opts as Parameters<typeof kube.config.applyToHTTPSOptions>[0]);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<T>((resolve, reject) => {
      const req = send(opts, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 299) {
            reject(new ApiException(status, `GET ${url.pathname} failed`, text, res.headers as Record<string, string>));
            return;
          }
          try {
            resolve(JSON.parse(text) as T);
          } catch (err) {
            reject(err as Error);
          }
        });
      });
      req.setTimeout(60_000, () => req.destroy(Object.assign(new Error(`GET ${url.pathname} timed out`), { code: 'ETIMEDOUT' })));
      req.on('error', reject);
      req.end();
    });
  }

  return {
    get: (path, query = {}) => retryTransient(() => once(path, query)),
    tryGet: <T>(path: string) => undefinedIfNotFound(() => retryTransient(() => once<T>(path, {}))),
  };
}
