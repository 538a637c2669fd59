/**
 * Opens the repository a pod volume's data lives in: the storage location's store under `kopia/<volumeNamespace>/`
 * (docs/repositories.md), unlocked with the password in Secret `velero-repo-credentials`, key
 * `repository-password`, of the install namespace. The BackupRepository controller creates the repository and the
 * Secret; the data mover only opens them and fails clearly when they are not there yet.
 *
 * Where Velero left a kopia repository instead, restores read it (openRestoreSource) and everything that would write
 * to it is refused: cairn never writes into a Velero repository.
 */
import { Kinds, parseBackupStorageLocation, type BackupStorageLocation } from '../api/index.js';
import { RepoCredentials } from '../api/constants.js';
import { RepositoryNotFoundError } from '../datapath/errors.js';
import type { LockOwnerPod } from '../datapath/locks.js';
import { Repository } from '../datapath/repository.js';
import { podLockLiveness } from './lock-owner.js';
import type { Kube } from '../kube/client.js';
import { customClient } from '../kube/custom.js';
import type { RetryOptions } from '../plugins/object-store/retry.js';
import { withUploadRate } from '../plugins/object-store/upload-rate.js';
import type { KopiaRepository } from '../datapath/kopia/repository.js';
import { openRepositoryStore } from './repository-store.js';
import { holdsVeleroKopiaRepository, openVeleroKopiaRepository, type PasswordSource } from './velero-kopia.js';

export class VolumeRepositoryError extends Error {}

/** The place holds a Velero kopia repository: restores read it, nothing writes to it. */
export class ReadOnlyKopiaRepositoryError extends VolumeRepositoryError {}

export interface OpenRepositoryForVolumeOptions {
  kube: Kube;
  /** The install namespace (locations and the credentials Secret live there). */
  namespace: string;
  bslName: string;
  volumeNamespace: string;
  /** Caps the bytes per second written to the store (backups; the node-agent ConfigMap's uploadBytesPerSecond). */
  uploadBytesPerSecond?: number | undefined;
  /** How transient store failures are retried (the node-agent ConfigMap's storeRetryTimeout; default 5 minutes). */
  retry?: RetryOptions;
  /** The data-mover pod this runs in, recorded in the repository locks it takes (lock-owner.ts). */
  lockOwner?: LockOwnerPod | undefined;
}

export interface VolumeRepository {
  repository: Repository;
  /** Where it is, for messages (never credentials). */
  location: string;
}

export async function openRepositoryForVolume(opts: OpenRepositoryForVolumeOptions): Promise<VolumeRepository> {
  const location = await locationOf(opts);
  // The same store the BackupRepository controller initialised (src/storage/repository-store.ts).
  const store = withUploadRate(await openRepositoryStore({ location, volumeNamespace: opts.volumeNamespace, kube: opts.kube, ...(opts.retry ? { retry: opts.retry } : {}) }), opts.uploadBytesPerSecond);
  // Whether a repository is there is a fact of the storage: it is told before the password is looked for.
  if (!(await store.head('config'))) {
    if (await holdsVeleroKopiaRepository(store)) {
      throw new ReadOnlyKopiaRepositoryError(
        `${store.description} holds a Velero kopia repository (volume namespace "${opts.volumeNamespace}", location "${opts.bslName}"): cairn restores from it but never writes to it; back this namespace up to another backup storage location`,
      );
    }
    throw noRepository(opts, store.description);
  }
  const password = await repositoryPassword(opts.kube, opts.namespace);
  try {
    const repository = await Repository.open({
      store,
      password,
      // Locks name this pod, and leftovers of data-mover pods that are gone are cleared when this one locks.
      locking: { ...(opts.lockOwner ? { pod: opts.lockOwner } : {}), liveness: podLockLiveness(opts.kube) },
    });
    return { repository, location: store.description };
  } catch (err) {
    if (err instanceof RepositoryNotFoundError) throw noRepository(opts, store.description, err);
    throw err;
  }
}

/** Where a restore reads a volume from: a cairn repository, or a Velero kopia repository (read-only). */
export type RestoreSource =
  | { kind: 'cairn'; repository: Repository; location: string }
  | { kind: 'kopia'; repository: KopiaRepository; location: string; passwordSource: PasswordSource };

/** Opens whichever repository is under `kopia/<volumeNamespace>/` of the location, for reading. */
export async function openRestoreSource(opts: OpenRepositoryForVolumeOptions & { signal?: AbortSignal }): Promise<RestoreSource> {
  try {
    const { repository, location } = await openRepositoryForVolume(opts);
    return { kind: 'cairn', repository, location };
  } catch (err) {
    if (!(err instanceof ReadOnlyKopiaRepositoryError)) throw err;
  }
  const location = await locationOf(opts);
  const store = await openRepositoryStore({ location, volumeNamespace: opts.volumeNamespace, kube: opts.kube, ...(opts.retry ? { retry: opts.retry } : {}) });
  const secretPassword = await repositoryPassword(opts.kube, opts.namespace);
  const { repository, passwordSource } = await openVeleroKopiaRepository({ store, secretPassword, ...(opts.signal ? { signal: opts.signal } : {}) });
  return { kind: 'kopia', repository, location: store.description, passwordSource };
}

async function locationOf(opts: OpenRepositoryForVolumeOptions): Promise<BackupStorageLocation> {
  const locations = customClient<BackupStorageLocation>(opts.kube, Kinds.BackupStorageLocation, parseBackupStorageLocation);
  const location = await locations.get(opts.namespace, opts.bslName);
  if (!location) throw new VolumeRepositoryError(`backup storage location "${opts.bslName}" not found in namespace ${opts.namespace}`);
  return location;
}

function noRepository(opts: OpenRepositoryForVolumeOptions, where: string, cause?: Error): VolumeRepositoryError {
  return new VolumeRepositoryError(
    `no repository for volume namespace "${opts.volumeNamespace}" at ${where} (location "${opts.bslName}"); its BackupRepository must be Ready first`,
    ...(cause ? [{ cause }] : []),
  );
}

async function repositoryPassword(kube: Kube, namespace: string): Promise<string> {
  let data: Record<string, string> | undefined;
  try {
    const secret = await kube.core.readNamespacedSecret({ name: RepoCredentials.SecretName, namespace });
    data = secret.data;
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === 404) throw new VolumeRepositoryError(`Secret ${RepoCredentials.SecretName} not found in namespace ${namespace}; its BackupRepository must be Ready first`);
    throw new VolumeRepositoryError(`cannot read Secret ${RepoCredentials.SecretName} in namespace ${namespace} (HTTP ${code ?? 'error'})`);
  }
  const value = data?.[RepoCredentials.Key];
  if (!value) throw new VolumeRepositoryError(`Secret ${RepoCredentials.SecretName} has no key "${RepoCredentials.Key}"`);
  return Buffer.from(value, 'base64').toString('utf8');
}
