/**
 * Opens the object store of one repository: the location's bucket under `<prefix>/kopia/<volumeNamespace>/`
 * (layout.ts `repositoryPrefix`, where Velero keeps kopia repositories).
 */
import type { BackupStorageLocation } from '../api/index.js';
import type { Kube } from '../kube/client.js';
import type { ObjectStore, RetryOptions } from '../plugins/object-store/index.js';
import { repositoryPrefix } from './layout.js';
import { openLocationStore } from './location-store.js';

/** The location's object-storage prefix with the repository's directory appended ("a/b" + "kopia/ns/"). */
export function repositoryStoragePrefix(locationPrefix: string | undefined, volumeNamespace: string): string {
  const base = (locationPrefix ?? '').replace(/^\/+|\/+$/g, '');
  return `${base ? `${base}/` : ''}${repositoryPrefix(volumeNamespace)}`;
}

export interface OpenRepositoryStoreOptions {
  location: BackupStorageLocation;
  volumeNamespace: string;
  kube: Kube;
  /** How transient store failures are retried (default: 5 minutes per operation). */
  retry?: RetryOptions;
}

export async function openRepositoryStore(opts: OpenRepositoryStoreOptions): Promise<ObjectStore> {
  const { location } = opts;
  const prefix = repositoryStoragePrefix(location.spec.objectStorage.prefix, opts.volumeNamespace);
  const scoped: BackupStorageLocation = { ...location, spec: { ...location.spec, objectStorage: { ...location.spec.objectStorage, prefix } } };
  return openLocationStore({ location: scoped, kube: opts.kube, ...(opts.retry ? { retry: opts.retry } : {}) });
}
