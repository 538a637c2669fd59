/**
 * Opens the object store behind a BackupStorageLocation: S3 (provider aws, any S3-compatible endpoint) or a
 * directory (provider filesystem), built in; or an ObjectStore plugin registered under the provider's name (a
 * provider without a domain is Velero's: `gcp` is `velero.io/gcp`), when the caller has plugins and either no
 * built-in serves the provider or the server was asked to prefer the plugin. Credentials come from the location's
 * `spec.credential` Secret, else from the file in AWS_SHARED_CREDENTIALS_FILE (the mounted cloud-credentials
 * Secret), else from the environment; a plugin gets the Secret's key as a file (`credentialsFile`), as Velero does.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackupStorageLocation } from '../api/index.js';
import type { Kube } from '../kube/client.js';
import { FilesystemObjectStore, RetryingObjectStore, S3ObjectStore, type ObjectStore, type RetryOptions } from '../plugins/object-store/index.js';
import { parseAwsCredentialsFile, type AwsCredentials } from '../plugins/object-store/aws-credentials.js';
import { qualifiedPluginName } from '../plugins/external/kinds.js';
import type { ExternalPlugins, PluginSession } from '../plugins/external/session.js';

export class LocationConfigError extends Error {}

/** The plugin names of the built-in stores (what `plugin get` lists; a plugin with one of them is not used unless preferred). */
export const BUILTIN_OBJECT_STORE_NAMES: readonly string[] = ['velero.io/aws', 'velero.io/filesystem'];

/** What a caller with external plugins passes: the plugins, a session to run them in, and the preferred names. */
export interface LocationPlugins {
  external: ExternalPlugins;
  session: PluginSession;
  preferred: ReadonlySet<string>;
}

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
  /** External object-store plugins (the server's); without them only the built-in providers open. */
  plugins?: LocationPlugins | undefined;
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

/** The ObjectStore plugin that serves this location, if one does and is to be used. */
export function pluginFor(location: BackupStorageLocation, plugins: LocationPlugins | undefined) {
  if (!plugins) return undefined;
  const name = qualifiedPluginName(location.spec.provider);
  const found = plugins.external.find('ObjectStore', name);
  if (!found) return undefined;
  return !BUILTIN_OBJECT_STORE_NAMES.includes(name) || plugins.preferred.has(name) ? found : undefined;
}

/**
 * Velero's Init config for an ObjectStore plugin: the location's config, its bucket and prefix, its CA bundle as
 * PEM text, and the path of a file holding its credential Secret's key.
 */
export async function pluginStoreConfig(opts: OpenLocationOptions): Promise<Record<string, string>> {
  const { location } = opts;
  const config: Record<string, string> = { ...(location.spec.config ?? {}), bucket: location.spec.objectStorage.bucket, prefix: location.spec.objectStorage.prefix ?? '' };
  const caCert = location.spec.objectStorage.caCert;
  if (caCert) config.caCert = Buffer.from(caCert, 'base64').toString('utf8');
  const ref = location.spec.credential;
  if (ref?.name) {
    if (!opts.kube) throw new LocationConfigError(`location "${location.metadata.name}" names Secret ${ref.name}, but no cluster access was given`);
    const namespace = location.metadata.namespace ?? 'velero';
    const secret = await opts.kube.core.readNamespacedSecret({ name: ref.name, namespace });
    const data = secret.data?.[ref.key];
    if (!data) throw new LocationConfigError(`Secret ${ref.name} has no key "${ref.key}"`);
    config.credentialsFile = credentialsFile(namespace, ref.name, ref.key, Buffer.from(data, 'base64'));
  }
  return config;
}

/** One private file per Secret key, rewritten on each open (Velero keeps such files under its credentials dir). */
function credentialsFile(namespace: string, secret: string, key: string, data: Buffer): string {
  const dir = join(tmpdir(), 'cairn-credentials', namespace);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${secret}-${key}`);
  writeFileSync(file, data, { mode: 0o600 });
  return file;
}

export async function openLocationStore(opts: OpenLocationOptions): Promise<ObjectStore> {
  const { location } = opts;
  const { bucket, prefix, caCert } = location.spec.objectStorage;
  const config = location.spec.config ?? {};
  const plugin = pluginFor(location, opts.plugins);
  if (plugin && opts.plugins) {
    // The gRPC stack is loaded only where a plugin is used (the node agent and data movers never load it).
    const { ObjectStorePluginClient, PluginObjectStore } = await import('../plugins/external/object-store.js');
    const client = new ObjectStorePluginClient(opts.plugins.session, plugin);
    await client.init(await pluginStoreConfig(opts));
    // Plugins do their own retrying (Velero adds none around them).
    return new PluginObjectStore({ client, bucket, ...(prefix ? { prefix } : {}) });
  }
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
    default: {
      const offered = opts.plugins?.external.list('ObjectStore').map((p) => p.name) ?? [];
      throw new LocationConfigError(
        opts.plugins
          ? `provider "${location.spec.provider}" is not supported: no built-in store (aws, filesystem) and no ObjectStore plugin of that name${offered.length ? ` (plugins: ${offered.join(', ')})` : ''}`
          : `provider "${location.spec.provider}" is not supported here (built in: aws, filesystem; object-store plugins serve a location's backups in the server, not its volume data)`,
      );
    }
  }
  if (opts.retry === false) return store;
  return new RetryingObjectStore(store, opts.retry === true || opts.retry === undefined ? {} : opts.retry);
}
