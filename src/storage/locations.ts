/**
 * Finds the storage location a backup or restore uses and opens its store. Controllers call this per operation
 * (locations change); opening is cheap, clients are reused per location resourceVersion.
 */
import { Kinds, parseBackupStorageLocation, type BackupStorageLocation } from '../api/index.js';
import { customClient } from '../kube/custom.js';
import type { Kube } from '../kube/client.js';
import { BackupStore } from './backup-store.js';
import { openLocationStore, pluginFor, type LocationPlugins } from './location-store.js';

export interface ResolvedLocation {
  location: BackupStorageLocation;
  store: BackupStore;
}

export class LocationResolver {
  private readonly cache = new Map<string, { version: string; store: BackupStore }>();
  private readonly client;

  /** `plugins`: the server's external plugins (a long-lived session), for locations an ObjectStore plugin serves. */
  constructor(
    private readonly kube: Kube,
    private readonly namespace: string,
    private readonly plugins?: LocationPlugins,
  ) {
    this.client = customClient<BackupStorageLocation>(kube, Kinds.BackupStorageLocation, parseBackupStorageLocation);
  }

  async get(name: string): Promise<BackupStorageLocation | undefined> {
    return this.client.get(this.namespace, name);
  }

  /** The location marked default, else the one named `fallback` (the server's --default-backup-storage-location). */
  async defaultLocation(fallback: string): Promise<BackupStorageLocation | undefined> {
    const all = await this.client.list(this.namespace);
    return all.find((l) => l.spec.default) ?? all.find((l) => l.metadata.name === fallback);
  }

  /** Whether an ObjectStore plugin serves this location (its calls then run in a plugin process). */
  servedByPlugin(location: BackupStorageLocation): boolean {
    return pluginFor(location, this.plugins) !== undefined;
  }

  /**
   * The location's store in another plugin session (a backup's own, so the plugin's log lines go to that backup's
   * log, as Velero's per-backup plugin manager does); not cached.
   */
  async openIn(location: BackupStorageLocation, session: LocationPlugins['session']): Promise<BackupStore> {
    if (!this.plugins) return this.open(location);
    return new BackupStore(await openLocationStore({ location, kube: this.kube, plugins: { ...this.plugins, session } }));
  }

  async open(location: BackupStorageLocation): Promise<BackupStore> {
    const key = location.metadata.name ?? '';
    const version = location.metadata.resourceVersion ?? '';
    const hit = this.cache.get(key);
    if (hit && hit.version === version) return hit.store;
    const store = new BackupStore(await openLocationStore({ location, kube: this.kube, plugins: this.plugins }));
    this.cache.set(key, { version, store });
    return store;
  }

  async resolve(name: string): Promise<ResolvedLocation | undefined> {
    const location = await this.get(name);
    return location ? { location, store: await this.open(location) } : undefined;
  }
}
