/**
 * What the integration tests need to run server controllers in the test process against the test cluster: a
 * ServerContext for one namespace, the credentials Secret and a BackupStorageLocation over the test bucket.
 */
import { newBackupStorageLocation, type BackupStorageLocation } from '../../src/api/index.js';
import { createLogger, type LoggerOptions } from '../../src/base/logger.js';
import type { Kube } from '../../src/kube/client.js';
import { DEFAULT_SERVER_CONFIG, type ServerConfig, type ServerContext, type Stoppable } from '../../src/server/context.js';
import { clusterInfo } from './cluster.js';
import type { FakeClock } from './fake-clock.js';
import { credentialsText } from './server-install.js';

export interface InProcessContextOptions {
  /** The `component` field on every log line, which tells this file's lines apart in a shared log. */
  component?: string;
  /** Quiet by default: only what went wrong. */
  level?: LoggerOptions['level'];
  log?: Pick<LoggerOptions, 'format' | 'destination'>;
  config?: Partial<ServerConfig>;
  metrics?: ServerContext['metrics'];
  /** A fake clock for the controllers' time and timers; the real ones unless told. */
  clock?: FakeClock;
}

/** A ServerContext for controllers started in this process for `namespace`. */
export function inProcessContext(kube: Kube, namespace: string, o: InProcessContextOptions = {}): ServerContext {
  return {
    kube,
    namespace,
    logger: createLogger({ level: o.level ?? 'error', ...o.log, ...(o.component ? { bindings: { component: o.component } } : {}) }),
    version: 'test',
    config: { ...DEFAULT_SERVER_CONFIG, ...o.config },
    now: o.clock?.date ?? (() => new Date()),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.metrics ? { metrics: o.metrics } : {}),
  };
}

/** Stops the controllers started in this process, the last started first, and empties the list. */
export async function stopControllers(running: Stoppable[]): Promise<void> {
  for (const r of running.splice(0).reverse()) await r.stop();
}

/** A Secret holding an AWS credentials file under the key `cloud`; by default the test MinIO's (credentialsText()). */
export function credentialsSecret(namespace: string, name = 'creds', content = credentialsText()): object {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, stringData: { cloud: content } };
}

export interface BucketLocationOptions {
  namespace: string;
  name: string;
  /** Where in the bucket; the bucket's root unless told. */
  prefix?: string;
  /** The Secret (key `cloud`) with the credentials; `creds` unless told. */
  secret?: string;
  default?: boolean;
  /** Another bucket than the test bed's, e.g. one that does not exist. */
  bucket?: string;
  /** Another endpoint than the test MinIO's, e.g. one nothing listens on. */
  s3Url?: string;
  extraConfig?: Record<string, string>;
  backupSyncPeriod?: string;
  validationFrequency?: string;
}

/** A BackupStorageLocation over the test bed's bucket (MinIO, path-style), under `prefix`. */
export function bucketLocation(o: BucketLocationOptions): BackupStorageLocation {
  const { s3 } = clusterInfo();
  return newBackupStorageLocation({
    namespace: o.namespace,
    name: o.name,
    spec: {
      provider: 'aws',
      ...(o.default !== undefined ? { default: o.default } : {}),
      objectStorage: { bucket: o.bucket ?? s3.bucket, ...(o.prefix !== undefined ? { prefix: o.prefix } : {}) },
      credential: { name: o.secret ?? 'creds', key: 'cloud' },
      config: { region: s3.region, s3Url: o.s3Url ?? s3.endpoint, s3ForcePathStyle: 'true', ...o.extraConfig },
      ...(o.backupSyncPeriod !== undefined ? { backupSyncPeriod: o.backupSyncPeriod } : {}),
      ...(o.validationFrequency !== undefined ? { validationFrequency: o.validationFrequency } : {}),
    },
  });
}
