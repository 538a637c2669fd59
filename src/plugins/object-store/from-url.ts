/**
 * Builds an object store from a repository URL:
 *   /abs/path, ./rel/path, file:///abs/path           → filesystem
 *   s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=true&caBundle=/path → S3 (keys from AWS_ACCESS_KEY_ID /
 *   AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, or the SDK's default chain when those are unset)
 * wrapped in retry and concurrency-limit decorators. The S3 backend (and the AWS SDK, slow to load) is imported
 * only for s3:// URLs, so commands on a local repository start fast.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ObjectStore } from './types.js';
import { FilesystemObjectStore } from './filesystem.js';
import { RetryingObjectStore, type RetryOptions } from './retry.js';
import { ConcurrencyLimitedObjectStore } from './limit.js';

export interface OpenStoreOptions {
  url: string;
  env?: NodeJS.ProcessEnv;
  retry?: RetryOptions;
  maxConcurrent?: number;
}

export class InvalidStoreUrlError extends Error {}

export async function objectStoreFromUrl(options: OpenStoreOptions): Promise<ObjectStore> {
  const env = options.env ?? process.env;
  const raw = options.url;
  let base: ObjectStore;
  if (raw.startsWith('s3://')) {
    const u = new URL(raw);
    if (!u.hostname) throw new InvalidStoreUrlError('s3 URL needs a bucket: s3://<bucket>/<prefix>');
    const q = u.searchParams;
    const known = new Set(['endpoint', 'region', 'forcePathStyle', 'caBundle']);
    for (const k of q.keys()) if (!known.has(k)) throw new InvalidStoreUrlError(`unknown s3 URL parameter ${k} (known: ${[...known].join(', ')})`);
    const accessKeyId = env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
    const { S3ObjectStore } = await import('./s3.js');
    base = new S3ObjectStore({
      bucket: u.hostname,
      prefix: decodeURIComponent(u.pathname.replace(/^\/+/, '')),
      region: q.get('region') ?? env.AWS_REGION ?? 'us-east-1',
      ...(q.get('endpoint') ? { endpoint: q.get('endpoint')! } : {}),
      forcePathStyle: q.get('forcePathStyle') === 'true',
      ...(q.get('caBundle') ? { caBundle: q.get('caBundle')! } : {}),
      ...(accessKeyId && secretAccessKey
        ? { credentials: { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) } }
        : {}),
    });
  } else if (raw.startsWith('file://')) {
    base = new FilesystemObjectStore({ root: fileURLToPath(raw) });
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    throw new InvalidStoreUrlError(`unsupported repository URL scheme in ${raw.split('?')[0]} (use a path, file:// or s3://)`);
  } else {
    base = new FilesystemObjectStore({ root: resolve(raw) });
  }
  return new ConcurrencyLimitedObjectStore(new RetryingObjectStore(base, options.retry), options.maxConcurrent ?? 8);
}
