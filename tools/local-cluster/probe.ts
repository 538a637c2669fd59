/** Health probes of the cluster's servers: one HTTP(S) GET, optionally with the admin client certificate. */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';

export interface TlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /** For components serving a self-signed certificate (controller manager, scheduler). */
  insecure?: boolean;
}

export interface ProbeResult {
  status: number;
  body: string;
}

export function httpGet(url: string, tls: TlsFiles = {}, timeoutMs = 3_000): Promise<ProbeResult> {
  const u = new URL(url);
  const isHttps = u.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const options = isHttps
      ? {
          ca: tls.caFile ? readFileSync(tls.caFile) : undefined,
          cert: tls.certFile ? readFileSync(tls.certFile) : undefined,
          key: tls.keyFile ? readFileSync(tls.keyFile) : undefined,
          rejectUnauthorized: !tls.insecure,
          timeout: timeoutMs,
        }
      : { timeout: timeoutMs };
    const req = (isHttps ? httpsRequest : httpRequest)(u, { method: 'GET', ...options }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** True when GET url answers 200; any error or other status is "not healthy". */
export async function isHealthy(url: string, tls: TlsFiles = {}): Promise<boolean> {
  try {
    return (await httpGet(url, tls)).status === 200;
  } catch {
    return false;
  }
}
