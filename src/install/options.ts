/**
 * Turns `install` flags into validated InstallOptions. Every check happens here, before anything is created, and
 * each failure is one UsageError naming the flag. Credential file contents are parsed but never echoed.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { UsageError } from '../base/errors.js';
import { isValidDnsLabel, isValidName } from '../api/names.js';
import { InvalidRestoreScopeError, parseRestoreScope } from '../api/restore-scope.js';
import type { RestoreScope } from './rbac.js';
import { CredentialsFormatError, parseAwsCredentialsFile } from '../plugins/object-store/aws-credentials.js';
import { pluginNameProblem, qualifiedPluginName } from '../plugins/external/kinds.js';
import { checkPluginImage } from './plugins.js';

export const PROVIDERS = ['aws', 'filesystem'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** Config keys each provider understands; anything else is a typo we catch now rather than at backup time. */
export const PROVIDER_CONFIG_KEYS: Record<Provider, readonly string[]> = {
  aws: [
    'region', 's3Url', 'publicUrl', 's3ForcePathStyle', 'insecureSkipTLSVerify', 'profile', 'serverSideEncryption',
    'kmsKeyId', 'checksumAlgorithm', 'tagging', 'enableSharedConfig',
  ],
  filesystem: ['root'],
};
const BOOLEAN_KEYS = new Set(['s3ForcePathStyle', 'insecureSkipTLSVerify', 'enableSharedConfig']);
export const DEFAULT_FILESYSTEM_ROOT = '/var/lib/cairn/storage';

export interface InstallFlags {
  namespace: string;
  image: string;
  provider?: string | undefined;
  bucket?: string | undefined;
  prefix?: string | undefined;
  'backup-location-config'?: string | undefined;
  'secret-file'?: string | undefined;
  'no-secret'?: boolean | undefined;
  cacert?: string | undefined;
  'use-node-agent'?: boolean | undefined;
  'privileged-node-agent'?: boolean | undefined;
  'node-agent-configmap'?: string | undefined;
  'kubelet-root-dir'?: string | undefined;
  'default-volumes-to-fs-backup'?: boolean | undefined;
  /** Plugin images (Velero's `--plugins`), comma-separated or repeated. */
  plugins?: readonly string[] | undefined;
  'prefer-plugin'?: readonly string[] | undefined;
  'schedule-skip-immediately'?: boolean | undefined;
  'restore-resources'?: string | undefined;
  'metrics-service-monitor'?: boolean | undefined;
}

/** The kubelet's default --root-dir; distributions that move it (k0s, microk8s...) need --kubelet-root-dir. */
export const DEFAULT_KUBELET_ROOT_DIR = '/var/lib/kubelet';

export interface StorageLocationOptions {
  /** A built-in provider, or the name of an ObjectStore plugin installed with --plugins. */
  provider: Provider | string;
  bucket: string;
  prefix?: string;
  config: Record<string, string>;
  /** PEM bundle the server trusts for the object store, base64 in the BSL as Velero keeps it. */
  caCert?: string;
}

export interface InstallOptions {
  namespace: string;
  image: string;
  storageLocation?: StorageLocationOptions;
  /** Raw credentials file content for the `cloud-credentials` Secret; never logged. */
  credentials?: Buffer;
  useNodeAgent: boolean;
  /** The node agent as a privileged container rather than root with DAC_READ_SEARCH alone (Velero's --privileged-node-agent). */
  privilegedNodeAgent?: boolean;
  /** ConfigMap the node agent reads (flag --node-agent-configmap of `node-agent server`). */
  nodeAgentConfigMap?: string;
  /** The nodes' kubelet root directory (default /var/lib/kubelet): the node agent reads pod volumes from its pods/ folder. */
  kubeletRootDir?: string;
  defaultVolumesToFsBackup: boolean;
  /** Plugin images: one init container each copies its binary into the server's /plugins. */
  plugins?: string[];
  /** Plugin names the server prefers to the built-in of the same name (`server --prefer-plugin`). */
  preferPlugins?: string[];
  /** Server flag --schedule-skip-immediately. */
  scheduleSkipImmediately?: boolean;
  /** What restore may create: everything the API server serves (default), or the resources of --restore-resources. */
  restoreScope?: RestoreScope;
  /** Also create the metrics Services and a Prometheus-operator ServiceMonitor over them (`--metrics-service-monitor`). */
  metricsServiceMonitor?: boolean;
}

/** Parses `key=value,key2=value2`; a malformed part is a UsageError naming the flag. */
export function parseKeyValueList(flag: string, text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    const piece = part.trim();
    if (!piece) continue;
    const eq = piece.indexOf('=');
    if (eq <= 0) throw new UsageError(flag, `expected key=value pairs separated by commas, got "${piece}"`);
    const key = piece.slice(0, eq).trim();
    const value = piece.slice(eq + 1).trim();
    if (key in out) throw new UsageError(flag, `key "${key}" given twice`);
    out[key] = value;
  }
  return out;
}

export function checkBucket(provider: Provider, bucket: string): void {
  if (provider === 'aws' && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new UsageError('--bucket', `"${bucket}" is not a valid S3 bucket name (3-63 lower-case letters, digits, dots, hyphens)`);
  }
  if (provider === 'filesystem' && (bucket.includes('/') || bucket === '.' || bucket === '..' || bucket === '')) {
    throw new UsageError('--bucket', `"${bucket}" must be a single directory name`);
  }
}

export function checkConfig(provider: Provider, config: Record<string, string>, flag = '--backup-location-config'): void {
  const allowed = PROVIDER_CONFIG_KEYS[provider];
  for (const [key, value] of Object.entries(config)) {
    if (!allowed.includes(key)) {
      throw new UsageError(flag, `unknown key "${key}" for provider ${provider} (known: ${allowed.join(', ')})`);
    }
    if (BOOLEAN_KEYS.has(key) && value !== 'true' && value !== 'false') {
      throw new UsageError(flag, `${key} must be true or false, got "${value}"`);
    }
    if ((key === 's3Url' || key === 'publicUrl') && !/^https?:\/\/[^/\s]+/.test(value)) {
      throw new UsageError(flag, `${key} must be an http(s) URL, got "${value}"`);
    }
    if (key === 'root' && !isAbsolute(value)) {
      throw new UsageError(flag, `root must be an absolute path, got "${value}"`);
    }
  }
}

export function readFlagFile(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (err as Error).message;
    throw new UsageError(flag, `cannot read ${path}: ${reason}`);
  }
}

/** Checks an AWS shared-credentials file has a profile with both keys, without ever printing values. */
export function checkAwsCredentials(content: Buffer, profile = 'default'): void {
  try {
    parseAwsCredentialsFile(content, profile);
  } catch (err) {
    if (err instanceof CredentialsFormatError) throw new UsageError('--secret-file', err.message);
    throw err;
  }
}

export function parseProvider(flag: string, value: string): Provider {
  if (!(PROVIDERS as readonly string[]).includes(value)) {
    throw new UsageError(flag, `unknown provider "${value}" (use one of: ${PROVIDERS.join(', ')})`);
  }
  return value as Provider;
}

export function normalisePrefix(prefix: string | undefined): string | undefined {
  const p = prefix?.replace(/^\/+|\/+$/g, '');
  return p ? p : undefined;
}

function parseKubeletRootDir(value: string | undefined): string {
  if (value === undefined) return DEFAULT_KUBELET_ROOT_DIR;
  const dir = value.replace(/\/+$/, '');
  if (!dir.startsWith('/') || dir.split('/').includes('..')) {
    throw new UsageError('--kubelet-root-dir', `"${value}" must be an absolute path on the nodes`);
  }
  return dir;
}

export function parseInstallFlags(flags: InstallFlags): InstallOptions {
  if (!isValidDnsLabel(flags.namespace)) {
    throw new UsageError('--namespace', `"${flags.namespace}" is not a valid namespace name (lower-case letters, digits and '-', at most 63)`);
  }
  if (!flags.image.trim() || /\s/.test(flags.image)) throw new UsageError('--image', `"${flags.image}" is not an image reference`);

  const options: InstallOptions = {
    namespace: flags.namespace,
    image: flags.image,
    useNodeAgent: flags['use-node-agent'] ?? false,
    defaultVolumesToFsBackup: flags['default-volumes-to-fs-backup'] ?? false,
    scheduleSkipImmediately: flags['schedule-skip-immediately'] ?? false,
    metricsServiceMonitor: flags['metrics-service-monitor'] ?? false,
    kubeletRootDir: parseKubeletRootDir(flags['kubelet-root-dir']),
    plugins: (flags.plugins ?? []).flatMap((p) => p.split(',')).filter((p) => p.trim()).map((p) => checkPluginImage('--plugins', p)),
    preferPlugins: (flags['prefer-plugin'] ?? []).flatMap((p) => p.split(',')).filter((p) => p.trim()).map((p) => {
      const name = qualifiedPluginName(p.trim());
      const problem = pluginNameProblem(name);
      if (problem) throw new UsageError('--prefer-plugin', problem);
      return name;
    }),
  };
  const plugins = options.plugins ?? [];
  if (new Set(plugins).size !== plugins.length) throw new UsageError('--plugins', 'an image is given twice');
  if (flags['restore-resources'] !== undefined) {
    try {
      options.restoreScope = parseRestoreScope(flags['restore-resources'].split(','));
    } catch (err) {
      if (err instanceof InvalidRestoreScopeError) throw new UsageError('--restore-resources', err.message);
      throw err;
    }
  }
  if (flags['privileged-node-agent']) {
    if (!options.useNodeAgent) throw new UsageError('--privileged-node-agent', 'needs --use-node-agent');
    options.privilegedNodeAgent = true;
  }
  const agentConfig = flags['node-agent-configmap'];
  if (agentConfig !== undefined) {
    if (!isValidName(agentConfig)) throw new UsageError('--node-agent-configmap', `"${agentConfig}" is not a valid ConfigMap name`);
    if (!options.useNodeAgent) throw new UsageError('--node-agent-configmap', 'needs --use-node-agent');
    options.nodeAgentConfigMap = agentConfig;
  }

  if (flags.provider === undefined) {
    for (const f of ['bucket', 'prefix', 'backup-location-config', 'secret-file', 'cacert'] as const) {
      if (flags[f] !== undefined) throw new UsageError(`--${f}`, 'needs --provider');
    }
    return options;
  }
  // A provider no built-in store serves must come from a plugin (Velero's --provider gcp --plugins ...-for-gcp):
  // its config and credentials are the plugin's to check, when the server starts it.
  const builtIn = (PROVIDERS as readonly string[]).includes(flags.provider);
  if (!builtIn && plugins.length === 0) {
    throw new UsageError('--provider', `"${flags.provider}" is not built in (built in: ${PROVIDERS.join(', ')}); install the plugin that provides it with --plugins IMAGE`);
  }
  if (!builtIn && (!flags.provider.trim() || /\s/.test(flags.provider))) throw new UsageError('--provider', `"${flags.provider}" is not a provider name`);
  const provider = builtIn ? parseProvider('--provider', flags.provider) : flags.provider;
  if (!flags.bucket) throw new UsageError('--bucket', `required with --provider ${provider}`);
  const config = flags['backup-location-config'] ? parseKeyValueList('--backup-location-config', flags['backup-location-config']) : {};
  if (builtIn) {
    checkBucket(provider as Provider, flags.bucket);
    checkConfig(provider as Provider, config);
  }
  if (provider === 'filesystem' && !config.root) config.root = DEFAULT_FILESYSTEM_ROOT;

  const prefix = normalisePrefix(flags.prefix);
  const location: StorageLocationOptions = { provider, bucket: flags.bucket, config };
  if (prefix) location.prefix = prefix;
  if (flags.cacert) location.caCert = readFlagFile('--cacert', flags.cacert).toString('base64');
  options.storageLocation = location;

  if (provider === 'filesystem') {
    if (flags['secret-file']) throw new UsageError('--secret-file', 'the filesystem provider takes no credentials');
  } else if (flags['secret-file']) {
    if (flags['no-secret']) throw new UsageError('--secret-file', 'cannot be combined with --no-secret');
    const content = readFlagFile('--secret-file', flags['secret-file']);
    // Only the built-in S3 store reads the file as AWS credentials; a plugin reads its own format.
    if (builtIn) checkAwsCredentials(content, config.profile ?? 'default');
    options.credentials = content;
  } else if (!flags['no-secret']) {
    throw new UsageError('--secret-file', `required with --provider ${provider} (or pass --no-secret to use the node's own credentials)`);
  }
  return options;
}
