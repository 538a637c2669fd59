/**
 * Opens the object store behind a BackupStorageLocation: S3 (provider aws, any S3-compatible endpoint) or a
 * directory (provider filesystem). Credentials come from the location's `spec.credential` Secret, else from the
 * file in AWS_SHARED_CREDENTIALS_FILE (the mounted cloud-credentials Secret), else from the environment.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackupStorageLocation } from '../api/index.js';
import type { Kube } from '../kube/client.js';
import { FilesystemObjectStore, RetryingObjectStore, S3ObjectStore, type ObjectStore, type RetryOptions } from '../plugins/object-store/index.js';
import { parseAwsCredentialsFile, type AwsCredentials } from '../plugins/object-store/aws-credentials.js';

export class LocationConfigError extends Error {}

export interface LocationEnv {
  AWS_SHARED_CREDENTIALS_FILE?: string | undefined;
  AWS_ACCESS_KEY_ID?: string | undefined;
  AWS_SECRET_ACCESS_KEY?: string | undefined;
  AWS_SESSION_TOKEN?: string | undefined;
}

export interface OpenLocationOptions {
  location: BackupStorageLocation;
  /** Needed only when the location names a credential Secret. */
  kube?: Kube;
  env?: LocationEnv;
  /**
   * Retry transient failures with back-off: true (the default budget, 5 minutes per operation), false (never: the
   * location check reports an unreachable store at once), or the retry options (budget, clock, a log callback).
   */
  retry?: boolean | RetryOptions;
}

async function credentialsFor(opts: OpenLocationOptions): Promise<AwsCredentials | undefined> {
  const { location } = opts;
  const profile = location.spec.config?.profile ?? 'default';
  const ref = location.spec.credential;
  if (ref?.name) {
    if (!opts.kube) throw new LocationConfigError(`location "${location.metadata.name}" names Secret ${ref.name}, but no cluster access was given`);
    const secret = await opts.kube.core.readNamespacedSecret({ name: ref.name, namespace: location.metadata.namespace ?? 'velero' });
    const data = secret.data?.[ref.key];
    if (!data) throw new LocationConfigError(`Secret ${ref.name} has no key "${ref.key}"`);
    return parseAwsCredentialsFile(Buffer.from(data, 'base64'), profile);
  }
  const env = opts.env ?? process.env;
  if (env.AWS_SHARED_CREDENTIALS_FILE) {
    return parseAwsCredentialsFile(readFileSync(env.AWS_SHARED_CREDENTIALS_FILE), profile);
  }
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    return { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) };
  }
  return undefined;
}

/** The S3 client takes a CA bundle path; the location carries the PEM base64-encoded. */
function caBundleFile(caCertBase64: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-ca-'));
  const file = join(dir, 'ca.pem');
  writeFileSync(file, Buffer.from(caCertBase64, 'base64'), { mode: 0o600 });
  return file;
}

export async function openLocationStore(opts: OpenLocationOptions): Promise<ObjectStore> {
  const { location } = opts;
  const { bucket, prefix, caCert } = location.spec.objectStorage;
  const config = location.spec.config ?? {};
  let store: ObjectStore;
  switch (location.spec.provider) {
    case 'filesystem': {
      const root = config.root;
      if (!root) throw new LocationConfigError('filesystem location has no config.root');
      store = new FilesystemObjectStore({ root: join(root, bucket, prefix ?? '') });
      break;
    }
    case 'aws':
    case 'velero.io/aws': {
      const credentials = await credentialsFor(opts);
      store = new S3ObjectStore({
        bucket,
        ...(prefix ? { prefix } : {}),
        region: config.region ?? 'us-east-1',
        ...(config.s3Url ? { endpoint: config.s3Url } : {}),
        forcePathStyle: config.s3ForcePathStyle === 'true',
        ...(caCert ? { caBundle: caBundleFile(caCert) } : {}),
        ...(credentials ? { credentials } : {}),
      });
      break;
    }
    default:
      throw new LocationConfigError(`provider "${location.spec.provider}" is not supported (use aws or filesystem)`);
  }
  if (opts.retry === false) return store;
  return new RetryingObjectStore(store, opts.retry === true || opts.retry === undefined ? {} : opts.retry);
}
