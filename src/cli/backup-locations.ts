/**
 * `backup-location get|create|set`: building BackupStorageLocations from flags (validated like `install`), the
 * table Velero prints, and keeping at most one location marked default.
 */
import {
  BackupStorageLocationAccessModes,
  Kinds,
  isGoDuration,
  isValidName,
  newBackupStorageLocation,
  parseBackupStorageLocation,
  type BackupStorageLocation,
  type BackupStorageLocationAccessMode,
} from '../api/index.js';
import { UsageError, NotFoundError } from '../base/errors.js';
import { formatAge, type Column } from './output.js';
import { customClient, type CustomClient } from '../kube/custom.js';
import type { Kube } from '../kube/client.js';
import { PROVIDERS, checkBucket, checkConfig, normalisePrefix, parseKeyValueList, parseProvider, readFlagFile, type Provider } from '../install/options.js';

export function locationClient(kube: Kube): CustomClient<BackupStorageLocation> {
  return customClient<BackupStorageLocation>(kube, Kinds.BackupStorageLocation, parseBackupStorageLocation);
}

export const locationColumns: readonly Column<BackupStorageLocation>[] = [
  { header: 'name', value: (l) => l.metadata.name ?? '' },
  { header: 'provider', value: (l) => l.spec.provider },
  { header: 'bucket/prefix', value: (l) => (l.spec.objectStorage.prefix ? `${l.spec.objectStorage.bucket}/${l.spec.objectStorage.prefix}` : l.spec.objectStorage.bucket) },
  { header: 'phase', value: (l) => l.status?.phase ?? 'Unknown' },
  { header: 'last validated', value: (l) => (l.status?.lastValidationTime ? formatAge(l.status.lastValidationTime) : 'Unknown') },
  { header: 'access mode', value: (l) => l.spec.accessMode ?? 'ReadWrite' },
  { header: 'default', value: (l) => (l.spec.default ? 'true' : 'false') },
];

/** "secret=key" → the BSL credential reference. */
export function parseCredential(flag: string, text: string): { name: string; key: string } {
  const parts = parseKeyValueList(flag, text);
  const entries = Object.entries(parts);
  if (entries.length !== 1) throw new UsageError(flag, 'expected exactly one secret-name=key pair');
  const [name, key] = entries[0] as [string, string];
  if (!isValidName(name)) throw new UsageError(flag, `"${name}" is not a valid Secret name`);
  if (!key) throw new UsageError(flag, 'the Secret key is empty');
  return { name, key };
}

function checkAccessMode(value: string): BackupStorageLocationAccessMode {
  if (!(BackupStorageLocationAccessModes as readonly string[]).includes(value)) {
    throw new UsageError('--access-mode', `"${value}" is not one of ${BackupStorageLocationAccessModes.join(', ')}`);
  }
  return value as BackupStorageLocationAccessMode;
}

function checkDuration(flag: string, value: string): string {
  if (!isGoDuration(value)) throw new UsageError(flag, `"${value}" is not a duration (examples: 1m, 30s, 1h)`);
  return value;
}

export interface CreateLocationFlags {
  name: string;
  namespace: string;
  provider?: string | undefined;
  bucket?: string | undefined;
  prefix?: string | undefined;
  config?: string | undefined;
  credential?: string | undefined;
  default?: boolean | undefined;
  'access-mode'?: string | undefined;
  'backup-sync-period'?: string | undefined;
  'validation-frequency'?: string | undefined;
  cacert?: string | undefined;
  labels?: string | undefined;
}

export function buildLocation(flags: CreateLocationFlags): BackupStorageLocation {
  if (!isValidName(flags.name)) throw new UsageError('NAME', `"${flags.name}" is not a valid name (lower-case letters, digits, '-' and '.')`);
  if (!flags.provider) throw new UsageError('--provider', 'required');
  // A provider no built-in store serves is an ObjectStore plugin's (e.g. gcp): the server checks it has one, and the
  // plugin checks the bucket and config (the location is Unavailable with their words otherwise).
  const builtIn = (PROVIDERS as readonly string[]).includes(flags.provider);
  if (!builtIn && /\s/.test(flags.provider)) throw new UsageError('--provider', `"${flags.provider}" is not a provider name`);
  const provider = builtIn ? parseProvider('--provider', flags.provider) : flags.provider;
  if (!flags.bucket) throw new UsageError('--bucket', 'required');
  const config = flags.config ? parseKeyValueList('--config', flags.config) : {};
  if (builtIn) {
    checkBucket(provider as Provider, flags.bucket);
    checkConfig(provider as Provider, config, '--config');
  }
  const prefix = normalisePrefix(flags.prefix);
  const objectStorage: BackupStorageLocation['spec']['objectStorage'] = { bucket: flags.bucket };
  if (prefix) objectStorage.prefix = prefix;
  if (flags.cacert) objectStorage.caCert = readFlagFile('--cacert', flags.cacert).toString('base64');
  const spec: BackupStorageLocation['spec'] = { provider, objectStorage, accessMode: checkAccessMode(flags['access-mode'] ?? 'ReadWrite') };
  if (Object.keys(config).length) spec.config = config;
  if (flags.credential) spec.credential = parseCredential('--credential', flags.credential);
  if (flags.default) spec.default = true;
  if (flags['backup-sync-period']) spec.backupSyncPeriod = checkDuration('--backup-sync-period', flags['backup-sync-period']);
  if (flags['validation-frequency']) spec.validationFrequency = checkDuration('--validation-frequency', flags['validation-frequency']);
  const labels = flags.labels ? parseKeyValueList('--labels', flags.labels) : undefined;
  return newBackupStorageLocation({ namespace: flags.namespace, name: flags.name, ...(labels ? { labels } : {}), spec });
}

/** Clears `default` on every other location so exactly one is the default, as Velero's CLI does. */
export async function unsetOtherDefaults(client: CustomClient<BackupStorageLocation>, namespace: string, keep: string): Promise<string[]> {
  const changed: string[] = [];
  for (const loc of await client.list(namespace)) {
    const name = loc.metadata.name ?? '';
    if (name === keep || !loc.spec.default) continue;
    await client.update(namespace, name, (o) => {
      o.spec.default = false;
    });
    changed.push(name);
  }
  return changed;
}

export interface SetLocationFlags {
  default?: boolean | undefined;
  credential?: string | undefined;
  cacert?: string | undefined;
}

export async function setLocation(client: CustomClient<BackupStorageLocation>, namespace: string, name: string, flags: SetLocationFlags): Promise<BackupStorageLocation> {
  if (flags.default === undefined && !flags.credential && !flags.cacert) {
    throw new UsageError('--default', 'nothing to set: pass --default, --credential or --cacert');
  }
  const credential = flags.credential ? parseCredential('--credential', flags.credential) : undefined;
  const caCert = flags.cacert ? readFlagFile('--cacert', flags.cacert).toString('base64') : undefined;
  const updated = await client.update(namespace, name, (o) => {
    if (flags.default !== undefined) o.spec.default = flags.default;
    if (credential) o.spec.credential = credential;
    if (caCert) o.spec.objectStorage.caCert = caCert;
  });
  if (!updated) throw new NotFoundError(`backup storage location "${name}" not found in namespace "${namespace}"`);
  if (flags.default) await unsetOtherDefaults(client, namespace, name);
  return updated;
}
