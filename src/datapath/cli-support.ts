/**
 * What the `cairn repo …` commands share: the --repo/--password-file flags, opening the store and repository, and
 * turning data-path errors into the CLI's typed errors (one clear line, documented exit code). Secrets never appear
 * in messages: the URL shown is the store's description, which has no credentials.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Flags } from '@oclif/core';
import { parseDuration } from '../api/duration.js';
import { CairnError, NotFoundError, OperationFailedError, UsageError } from '../base/errors.js';
import { objectStoreFromUrl, InvalidStoreUrlError } from '../plugins/object-store/from-url.js';
import { ObjectStoreError } from '../plugins/object-store/errors.js';
import type { ObjectStore } from '../plugins/object-store/types.js';
import { withUploadRate } from '../plugins/object-store/upload-rate.js';
import {
  CancelledError,
  RepositoryCorruptError,
  RepositoryExistsError,
  RepositoryLockedError,
  RepositoryNotFoundError,
  SnapshotNotFoundError,
  WrongPasswordError,
} from './errors.js';
import { Repository } from './repository.js';
import { keyFileCachePath, readCachedKeyFile, rememberKeyFile, startEarlyDerivation } from './key-file-cache.js';
import { defaultCacheDir } from './listing-cache.js';
import { AuthenticationError } from './crypto.js';

export const repoFlags = {
  repo: Flags.string({
    description: 'Repository: a path, file:///abs/path, or s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=true[&caBundle=/path] (S3 keys from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY).',
    required: true,
    env: 'CAIRN_REPO',
  }),
  'password-file': Flags.string({ description: 'File holding the repository password (default: $CAIRN_REPO_PASSWORD).' }),
  'store-retry-timeout': Flags.string({
    description: 'How long to keep retrying an object-store call that fails transiently (refused, reset, timeout, throttled, 5xx) before failing (Go duration; 0s = no retries).',
    default: '5m',
  }),
};

/** The retry budget of --store-retry-timeout, in milliseconds. */
export function storeRetryForMs(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch {
    throw new UsageError('--store-retry-timeout', `"${text}" is not a duration (examples: 90s, 5m, 1h30m)`);
  }
  if (ms < 0) throw new UsageError('--store-retry-timeout', `"${text}" is negative`);
  return ms;
}

export function readPassword(file: string | undefined, envName = 'CAIRN_REPO_PASSWORD', flag = '--password-file'): string {
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(flag, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    const pw = text.replace(/\r?\n$/, '');
    if (!pw) throw new UsageError(flag, `${file} is empty`);
    return pw;
  }
  const pw = process.env[envName];
  if (!pw) throw new UsageError(flag, `no password: set ${envName} or pass ${flag}`);
  return pw;
}

export async function openStore(url: string, retryTimeout?: string): Promise<ObjectStore> {
  const retryForMs = storeRetryForMs(retryTimeout);
  try {
    return await objectStoreFromUrl({ url, ...(retryForMs !== undefined ? { retry: { retryForMs } } : {}) });
  } catch (err) {
    if (err instanceof InvalidStoreUrlError) throw new UsageError('--repo', err.message);
    throw err;
  }
}

/**
 * Opens the repository of --repo. The key file that opened it last time is kept in the cache directory (`cacheDir`,
 * default cairn's; false: none), so the key's derivation starts before the object-store client is loaded
 * (key-file-cache.ts). `storeReady` runs once the store is made, before the repository is read: the place to boot
 * worker threads, whose start-up then overlaps the reads of config, keys and index rather than the loading of the
 * S3 client (which is on the way to the first read, where the workers are not needed yet).
 */
export async function openRepository(
  flags: { repo: string; 'password-file'?: string | undefined; 'store-retry-timeout'?: string | undefined },
  options: { prefetchIndex?: boolean; uploadBytesPerSecond?: number | undefined; cacheDir?: string | false; storeReady?: () => void } = {},
): Promise<Repository> {
  const password = readPassword(flags['password-file']);
  const cachePath = options.cacheDir === false ? undefined : keyFileCachePath(options.cacheDir ?? defaultCacheDir(), repoIdentity(flags.repo));
  const cached = cachePath ? readCachedKeyFile(cachePath) : undefined;
  const earlyDerivations = startEarlyDerivation(password, cached);
  const store = withUploadRate(await openStore(flags.repo, flags['store-retry-timeout']), options.uploadBytesPerSecond);
  options.storeReady?.();
  const repo = await Repository.open({ store, password, earlyDerivations, ...(options.prefetchIndex !== undefined ? { prefetchIndex: options.prefetchIndex } : {}) });
  if (cachePath) rememberKeyFile(cachePath, repo.openedWith, cached);
  return repo;
}

/** Keeps the key file of a repository just made, for the commands that follow (see openRepository). */
export function rememberNewRepository(repoUrl: string, repo: Repository, cacheDir: string = defaultCacheDir()): void {
  rememberKeyFile(keyFileCachePath(cacheDir, repoIdentity(repoUrl)), repo.openedWith, undefined);
}

/** --repo as the key of its cache entry: a local path made absolute, so that ./repo names one repository. */
function repoIdentity(url: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : resolve(url);
}

/** Maps data-path and store errors to the CLI's typed errors. */
export function toCliError(err: unknown): unknown {
  if (err instanceof CairnError) return err;
  if (err instanceof WrongPasswordError) return new UsageError('password', err.message);
  if (err instanceof RepositoryNotFoundError || err instanceof SnapshotNotFoundError) return new NotFoundError(err.message);
  if (err instanceof RepositoryExistsError) return new UsageError('--repo', err.message);
  if (err instanceof RepositoryLockedError || err instanceof RepositoryCorruptError || err instanceof AuthenticationError) return new OperationFailedError(err.message);
  if (err instanceof CancelledError) return Object.assign(new OperationFailedError('cancelled'), { exitCode: 130 });
  if (err instanceof ObjectStoreError) return new OperationFailedError(`object store error: ${err.message}`);
  return err;
}

/** An AbortSignal that fires on Ctrl-C / SIGTERM, so the operation can stop cleanly. */
export function interruptSignal(): AbortSignal {
  const ac = new AbortController();
  const stop = () => ac.abort(new CancelledError());
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return ac.signal;
}
