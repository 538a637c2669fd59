/**
 * Validates storage locations periodically: Available or Unavailable with the reason (docs/storage-locations.md).
 *
 * Every `spec.validationFrequency` (default: the server's --store-validation-frequency) the location is opened and
 * its top level listed: the listing proves the bucket exists and the credentials work, and anything at the top level
 * that Velero would not put there makes the location Unavailable. A changed spec is validated at
 * once, so fixing a location does not wait for the next period. A frequency of 0 disables periodic validation;
 * unlike Velero, cairn still validates such a location once, so backups can use it (documented).
 */
import {
  BackupStorageLocationPhase,
  Kinds,
  parseBackupStorageLocation,
  parseDuration,
  type BackupStorageLocation,
  statusTime,
} from '../api/index.js';
import { stat } from 'node:fs/promises';
import type { Kube } from '../kube/client.js';
import { customClient } from '../kube/custom.js';
import { eventRecorder } from '../kube/events.js';
import { startCustomController, type ObjectKey, type ReconcileResult } from '../kube/controller.js';
import { BackupStore } from '../storage/backup-store.js';
import { openLocationStore, type LocationPlugins } from '../storage/location-store.js';
import { isNotFound as isObjectNotFound } from '../plugins/object-store/index.js';
import type { ServerContext, Stoppable } from './context.js';

/** Fails with a clear message when `fn` takes longer than `ms`. */
export async function withTimeout<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${Math.round(ms / 1000)}s ${what}`)), ms);
  });
  try {
    return await Promise.race([fn(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const NETWORK = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|socket hang up|TimeoutError|timed out/i;

function statusOf(err: unknown): number | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    const http = (e as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode;
    if (typeof http === 'number') return http;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Why a location cannot be used, in words a user can act on. Messages come from the store and API errors, which
 * never carry credentials; the location's endpoint and bucket are named, its secrets never are.
 */
export function describeLocationError(err: unknown, location: BackupStorageLocation): string {
  const { bucket, prefix } = location.spec.objectStorage;
  const config = location.spec.config ?? {};
  const where = location.spec.provider === 'filesystem' ? `directory ${config.root ?? '?'}/${bucket}` : `bucket "${bucket}"${config.s3Url ? ` at ${config.s3Url}` : ''}`;
  const raw = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
  const status = statusOf(err);
  if (isObjectNotFound(err) || /NoSuchBucket/.test(raw)) return `${where} does not exist`;
  if (location.spec.credential?.name && status === 404) return `credentials Secret "${location.spec.credential.name}" not found`;
  if (status === 403 || /InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied|Forbidden/.test(raw)) {
    return `access to ${where} denied (check the location's credentials): ${raw}`;
  }
  if (NETWORK.test(raw)) return `cannot reach the object store for ${where}: ${raw}`;
  return `cannot use ${where}${prefix ? ` prefix "${prefix}"` : ''}: ${raw}`;
}

/** One validation may take this long before the location counts as unreachable. */
export const VALIDATION_TIMEOUT_MS = 30_000;

export interface ValidationOutcome {
  phase: 'Available' | 'Unavailable';
  /** Why the location is Unavailable; empty when Available. */
  message: string;
}

/** How often a location is validated, in ms; 0 = periodic validation disabled. */
export function validationFrequencyMs(location: BackupStorageLocation, serverDefaultMs: number): number {
  return locationPeriodMs(location.spec.validationFrequency, serverDefaultMs);
}

/** A location's period setting (Go duration), in ms: the server's default when unset or not a duration; 0 = disabled. */
export function locationPeriodMs(text: string | null | undefined, serverDefaultMs: number): number {
  if (text === undefined || text === null || text === '') return serverDefaultMs;
  try {
    return Math.max(0, parseDuration(text));
  } catch {
    return serverDefaultMs;
  }
}

/**
 * When the next validation is due, in ms from now (0 = now, undefined = never). `specChanged` is true when the spec
 * changed since this server last validated the location.
 */
export function nextValidationInMs(opts: { location: BackupStorageLocation; serverDefaultMs: number; now: Date; specChanged: boolean }): number | undefined {
  const { location, now } = opts;
  const last = location.status?.lastValidationTime ? Date.parse(location.status.lastValidationTime) : undefined;
  if (last === undefined || Number.isNaN(last) || !location.status?.phase || opts.specChanged) return 0;
  const every = validationFrequencyMs(location, opts.serverDefaultMs);
  if (every === 0) return undefined;
  return Math.max(0, last + every - now.getTime());
}

/**
 * Whether this location should be marked default: none is, and it carries the name of the server's
 * --default-backup-storage-location (Velero does the same, for setups made before `spec.default` existed).
 */
export function shouldBecomeDefault(location: BackupStorageLocation, all: readonly BackupStorageLocation[], serverDefaultName: string): boolean {
  return !location.spec.default && location.metadata.name === serverDefaultName && !all.some((l) => l.spec.default);
}

/** The outcome for a location from its layout problems (an empty list = Available). */
export function outcomeFromLayout(problems: readonly string[]): ValidationOutcome {
  if (problems.length === 0) return { phase: 'Available', message: '' };
  return { phase: 'Unavailable', message: `backup store layout is not Velero's: ${problems.join('; ')}` };
}

/** What the location's credentials were read from, and its version: a change means the store must be reopened. */
async function credentialsVersion(location: BackupStorageLocation, kube: Kube): Promise<string> {
  const ref = location.spec.credential;
  if (ref?.name) {
    const secret = await kube.core.readNamespacedSecret({ name: ref.name, namespace: location.metadata.namespace ?? '' }).catch(() => undefined);
    // No Secret: reopen every time, so the error comes from opening the store.
    return secret ? `secret ${secret.metadata?.resourceVersion ?? ''}` : `no secret ${Math.random()}`;
  }
  const file = process.env.AWS_SHARED_CREDENTIALS_FILE;
  if (file) return `file ${(await stat(file).catch(() => undefined))?.mtimeMs ?? Math.random()}`;
  return 'environment';
}

/**
 * Stores opened for validation, reused while the location's spec and credentials stay the same (opening one per
 * minute per location would pile up clients, and CA bundle files for locations with a caCert).
 */
export class ValidationStores {
  private readonly cache = new Map<string, { version: string; store: BackupStore }>();

  /** `plugins`: the server's ObjectStore plugins, for locations one of them serves. */
  constructor(private readonly plugins?: LocationPlugins) {}

  async open(location: BackupStorageLocation, kube: Kube): Promise<BackupStore> {
    const version = `${JSON.stringify(location.spec)} ${await credentialsVersion(location, kube)}`;
    const name = location.metadata.name ?? '';
    const hit = this.cache.get(name);
    if (hit?.version === version) return hit.store;
    const store = new BackupStore(await openLocationStore({ location, kube, retry: false, plugins: this.plugins }));
    this.cache.set(name, { version, store });
    return store;
  }

  forget(name: string): void {
    this.cache.delete(name);
  }
}

/** Opens the location without retries (an unreachable store must answer within the timeout) and checks it. */
export async function validateLocation(opts: { location: BackupStorageLocation; ctx: Pick<ServerContext, 'kube'>; timeoutMs?: number; stores?: ValidationStores }): Promise<ValidationOutcome> {
  const { location } = opts;
  const stores = opts.stores ?? new ValidationStores();
  try {
    return await withTimeout(opts.timeoutMs ?? VALIDATION_TIMEOUT_MS, 'validating the location', async () => {
      const store = await stores.open(location, opts.ctx.kube);
      return outcomeFromLayout(await store.layoutProblems());
    });
  } catch (err) {
    return { phase: 'Unavailable', message: describeLocationError(err, location) };
  }
}

export function backupStorageLocationReconciler(ctx: ServerContext, validate = validateLocation) {
  const client = customClient<BackupStorageLocation>(ctx.kube, Kinds.BackupStorageLocation, parseBackupStorageLocation);
  const events = eventRecorder(ctx.kube, { component: 'cairn-server' });
  const log = ctx.logger;
  /** The spec of each location as this server last validated it; a different one is validated at once. */
  const validatedSpec = new Map<string, string>();
  const stores = new ValidationStores(ctx.plugins?.locations);

  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    const location = await client.get(key.namespace, key.name);
    if (!location) {
      validatedSpec.delete(key.name);
      stores.forget(key.name);
      return;
    }
    if (shouldBecomeDefault(location, await client.list(key.namespace), ctx.config.defaultBackupLocation)) {
      await client.update(key.namespace, key.name, (o) => {
        if (o.spec.default) return false;
        o.spec.default = true;
      });
      log.info({ location: key.name }, 'no storage location was default; this one (the server default) is now');
      return; // the update brings the key back
    }
    const spec = JSON.stringify(location.spec);
    const known = validatedSpec.get(key.name);
    const specChanged = known !== undefined && known !== spec;
    // First sight after a start: take the last validation as being of this spec, so later edits are noticed.
    if (known === undefined && location.status?.lastValidationTime) validatedSpec.set(key.name, spec);
    const due = nextValidationInMs({ location, serverDefaultMs: ctx.config.storeValidationFrequencyMs, now: ctx.now(), specChanged });
    if (due === undefined) return;
    if (due > 0) return { requeueAfterMs: due };

    const outcome = await validate({ location, ctx, stores });
    const before = { phase: location.status?.phase, message: location.status?.message ?? '' };
    const written = await client.updateStatus(key.namespace, key.name, (o) => {
      o.status = { ...(o.status ?? {}), phase: outcome.phase, lastValidationTime: statusTime(ctx.now()) };
      if (outcome.message) o.status.message = outcome.message;
      else delete o.status.message;
    });
    if (!written) return;
    validatedSpec.set(key.name, spec);

    if (before.phase !== outcome.phase || before.message !== outcome.message) {
      const available = outcome.phase === BackupStorageLocationPhase.Available;
      log[available ? 'info' : 'warn']({ location: key.name, phase: outcome.phase, reason: outcome.message || undefined }, 'storage location validated');
      await events
        .event(written, available ? 'Normal' : 'Warning', available ? 'LocationAvailable' : 'LocationUnavailable', available ? `storage location ${key.name} is available` : outcome.message)
        .catch((err: unknown) => log.debug({ err: (err as Error).message }, 'could not record an Event'));
    }
    const every = validationFrequencyMs(written, ctx.config.storeValidationFrequencyMs);
    return every > 0 ? { requeueAfterMs: every } : undefined;
  };
}

export async function startBackupStorageLocationController(ctx: ServerContext): Promise<Stoppable> {
  const client = customClient<BackupStorageLocation>(ctx.kube, Kinds.BackupStorageLocation, parseBackupStorageLocation);
  return startCustomController<BackupStorageLocation>(ctx, client, {
    name: 'backup-storage-location',
    reconcile: backupStorageLocationReconciler(ctx),
    concurrency: 2,
  });
}
