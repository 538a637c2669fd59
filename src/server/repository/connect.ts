/**
 * Connects to a repository with the data path: opens it when it exists, initialises it (fresh random master keys)
 * when it does not. Also runs its maintenance. Errors say what went wrong without the password.
 */
import { Repository, type LockingOptions } from '../../datapath/repository.js';
import { RepositoryExistsError, RepositoryNotFoundError, WrongPasswordError } from '../../datapath/errors.js';
import { maintenance, type MaintenanceResult } from '../../datapath/maintenance.js';
import { UnsupportedKopiaRepositoryError } from '../../datapath/kopia/format.js';
import { VeleroRepositoryPasswordError } from '../../storage/velero-kopia.js';
import type { ObjectStore } from '../../plugins/object-store/index.js';

export interface ConnectOptions {
  store: ObjectStore;
  password: string;
}

export interface Connected {
  repository: Repository;
  /** True when this call initialised the repository. */
  initialised: boolean;
}

/** The prefix holds something that is not a cairn repository (e.g. a Velero kopia repository); cairn leaves it alone. */
export class ForeignRepositoryError extends Error {
  constructor(where: string, example: string) {
    super(`${where} holds objects that are not a cairn repository (for example "${example}", perhaps a Velero kopia repository); cairn does not write into it`);
    this.name = 'ForeignRepositoryError';
  }
}

/**
 * Some object under the store other than key files (an interrupted initialisation leaves only those), or undefined
 * when the place is empty enough to initialise.
 */
async function foreignObject(store: ObjectStore): Promise<string | undefined> {
  for await (const { key } of store.list('')) {
    if (!key.startsWith('keys/')) return key;
  }
  return undefined;
}

export async function connectOrInitialise(opts: ConnectOptions): Promise<Connected> {
  try {
    return { repository: await Repository.open(opts), initialised: false };
  } catch (err) {
    if (!(err instanceof RepositoryNotFoundError)) throw err;
  }
  const foreign = await foreignObject(opts.store);
  if (foreign !== undefined) throw new ForeignRepositoryError(opts.store.description, foreign);
  try {
    return { repository: await Repository.init(opts), initialised: true };
  } catch (err) {
    // Two servers raced to initialise: the other one won, open theirs.
    if (err instanceof RepositoryExistsError) return { repository: await Repository.open(opts), initialised: false };
    throw err;
  }
}

/** Why connecting failed, for `status.message`; the store description names bucket and prefix, never credentials. */
export function describeConnectError(err: unknown, where: string): string {
  if (err instanceof ForeignRepositoryError || err instanceof VeleroRepositoryPasswordError || err instanceof UnsupportedKopiaRepositoryError) return err.message;
  if (err instanceof WrongPasswordError) {
    return `the repository at ${where} does not open with the password in Secret velero-repo-credentials (it was created with another password)`;
  }
  const raw = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
  return `cannot connect to the repository at ${where}: ${raw}`;
}

/** Runs the data path's maintenance (it never removes what a running backup references: grace period and locks). */
export async function runMaintenance(
  opts: ConnectOptions & { gracePeriodMs?: number; signal?: AbortSignal; locking?: LockingOptions },
): Promise<MaintenanceResult> {
  const repository = await Repository.open({ store: opts.store, password: opts.password, ...(opts.locking ? { locking: opts.locking } : {}) });
  return maintenance({
    repository,
    ...(opts.gracePeriodMs !== undefined ? { gracePeriodMs: opts.gracePeriodMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

/** A one-line account of a maintenance run or failure, for `recentMaintenance[].message`. */
export function describeMaintenance(outcome: { result: MaintenanceResult } | { error: unknown }): string {
  if ('error' in outcome) {
    return (outcome.error instanceof Error ? outcome.error.message : String(outcome.error)).split('\n')[0]!.slice(0, 300);
  }
  const r = outcome.result;
  return `${r.snapshots} snapshots; packs: ${r.packsDeleted} deleted, ${r.packsRepacked} repacked, ${r.unindexedPacksDeleted} unindexed removed; ${r.bytesFreed} bytes freed`;
}
