/**
 * What every runBackup test starts from: backup `velero/b1` (uid u1) of namespace `app` into a temporary filesystem
 * location, a FakeCluster with that namespace, the builtin item actions and a backup log. Each test file adds its own
 * objects to `api` and its own creators and callbacks to `options`; fakePodVolumes stands in for fs-backup.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { newBackup, type BackupSpec, type PodVolumeBackup } from '../../../../src/api/index.js';
import type { Kube } from '../../../../src/kube/client.js';
import { FilesystemObjectStore, type ObjectStore } from '../../../../src/plugins/object-store/index.js';
import { ItemActionRegistry } from '../../../../src/plugins/item-actions/registry.js';
import { registerBuiltinBackupActions } from '../../../../src/server/item-actions/builtin.js';
import { createBackupLog } from '../../../../src/server/backup/backup-log.js';
import type { PodVolumeBackupCreator, PodVolumesOutcome } from '../../../../src/server/podvolume/backup-creator.js';
import type { PodLike } from '../../../../src/server/podvolume/backup-volumes.js';
import { BackupStore } from '../../../../src/storage/backup-store.js';
import { FakeCluster } from './fake-cluster.js';

export function runBackupFixture(opts: { tempPrefix: string; spec?: BackupSpec; api?: FakeCluster; wrapStore?: (fs: FilesystemObjectStore) => ObjectStore }) {
  const fs = new FilesystemObjectStore({ root: mkdtempSync(join(tmpdir(), opts.tempPrefix)), durability: 'none' });
  const backup = newBackup({ namespace: 'velero', name: 'b1', spec: { includedNamespaces: ['app'], storageLocation: 'default', ...opts.spec } });
  backup.metadata = { ...backup.metadata, uid: 'u1' };
  const api = opts.api ?? new FakeCluster().namespace('app');
  const log = createBackupLog({ backup: 'velero/b1' });
  const options = {
    kube: { server: 'fake' } as unknown as Kube,
    api,
    backup,
    store: new BackupStore(opts.wrapStore ? opts.wrapStore(fs) : fs),
    registry: registerBuiltinBackupActions(new ItemActionRegistry()),
    log: log.logger,
    logText: log.text,
  };
  /** A gzip'd JSON file of the backup, parsed. */
  const gz = async (file: string) => JSON.parse(gunzipSync(await fs.get(`backups/b1/${file}`)).toString('utf8')) as unknown;
  return { fs, backup, api, log, options, gz };
}

/** What backupPod answers for a pod: nothing backed up unless `o` says so. */
export function podVolumesOutcome(o: Partial<PodVolumesOutcome> = {}): PodVolumesOutcome {
  return { pvbs: [], skipped: [], errors: [], volumeInfo: [], pvSkips: [], ...o };
}

/** Stands in for the PodVolumeBackupCreator: answers each pod with `outcome` and lists every PVB it answered with. */
export function fakePodVolumes(outcome: (pod: PodLike) => PodVolumesOutcome): PodVolumeBackupCreator {
  const all: PodVolumeBackup[] = [];
  return {
    get podVolumeBackups() {
      return all;
    },
    backupPod: async (pod: PodLike): Promise<PodVolumesOutcome> => {
      const out = outcome(pod);
      all.push(...out.pvbs);
      return out;
    },
  } as unknown as PodVolumeBackupCreator;
}
