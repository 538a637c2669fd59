import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FaultInjectingObjectStore } from '../../../../src/plugins/object-store/index.js';
import { BackupStorageError, runBackup } from '../../../../src/server/backup/run-backup.js';
import { FakeCluster } from './fake-cluster.js';
import { runBackupFixture } from './run-backup-fixture.js';
import { readTarGz } from './tar.js';

function cluster(): FakeCluster {
  return new FakeCluster()
    .namespace('app')
    .add('configmaps', { name: 'settings', namespace: 'app' })
    .add('secrets', { name: 'creds', namespace: 'app', data: { password: 'dG9wLXNlY3JldA==' } });
}

function setup() {
  let faulty!: FaultInjectingObjectStore;
  const { fs, backup, options } = runBackupFixture({ tempPrefix: 'cairn-run-backup-', api: cluster(), wrapStore: (inner) => (faulty = new FaultInjectingObjectStore(inner)) });
  const finalizing: string[] = [];
  const opts = {
    ...options,
    onFinalizing: async (s: { phase: string }) => {
      finalizing.push(s.phase);
      return { ...backup, status: { phase: s.phase as 'Finalizing' } };
    },
  };
  return { fs, faulty, opts, finalizing };
}

describe('runBackup: items to files in the location', () => {
  it('puts every file with Velero names and encodings', async () => {
    const { fs, opts, finalizing } = setup();
    const outcome = await runBackup(opts);
    expect(outcome).toMatchObject({ phase: 'Completed', warnings: 0, errors: 0, progress: { totalItems: 3, itemsBackedUp: 3 } });
    expect(finalizing).toEqual(['Finalizing']);
    const keys: string[] = [];
    for await (const o of fs.list('backups/b1/')) keys.push(o.key);
    expect(keys.sort()).toEqual(
      [
        'velero-backup.json',
        'b1.tar.gz',
        'b1-logs.gz',
        'b1-results.gz',
        'b1-resource-list.json.gz',
        'b1-volumeinfo.json.gz',
        'b1-itemoperations.json.gz',
        'b1-podvolumebackups.json.gz',
        'b1-volumesnapshots.json.gz',
        'b1-csi-volumesnapshotclasses.json.gz',
      ].map((k) => `backups/b1/${k}`).sort(),
    );
    const text = async (k: string) => (await fs.get(`backups/b1/${k}`)).toString('utf8');
    const gz = async (k: string) => gunzipSync(await fs.get(`backups/b1/${k}`)).toString('utf8');
    expect(JSON.parse(await text('velero-backup.json'))).toMatchObject({ apiVersion: 'velero.io/v1', kind: 'Backup', status: { phase: 'Finalizing' } });
    expect(await gz('b1-resource-list.json.gz')).toBe('{"v1/ConfigMap":["app/settings"],"v1/Namespace":["app"],"v1/Secret":["app/creds"]}\n');
    expect(await gz('b1-results.gz')).toBe('{"warnings":{},"errors":{}}\n');
    expect(await gz('b1-itemoperations.json.gz')).toBe('[]\n');
    expect(await gz('b1-volumeinfo.json.gz')).toBe('[]\n');
    const log = await gz('b1-logs.gz');
    expect(log).toMatch(/^time="\d{4}-\d\d-\d\dT[\d:]+Z" level=info msg="Starting backup" backup=velero\/b1/m);
    expect(log).toContain('Backing up item');
    expect(log).not.toContain('dG9wLXNlY3JldA==');
    const entries = await readTarGz(await fs.get('backups/b1/b1.tar.gz'));
    expect(entries.map((e) => e.name)).toContain('resources/secrets/v1-preferredversion/namespaces/app/creds.json');
  });

  it('says which location could not be written, and leaves no metadata without a tarball', async () => {
    const { fs, faulty, opts } = setup();
    faulty.addFault({ ops: ['put'], keyPrefix: 'backups/b1/b1.tar.gz', retryable: false, message: 'disk full' });
    const err = await runBackup(opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackupStorageError);
    expect((err as Error).message).toMatch(/^cannot upload the backup to storage location default \(.*\): disk full$/);
    const keys: string[] = [];
    for await (const o of fs.list('backups/b1/')) keys.push(o.key);
    expect(keys).not.toContain('backups/b1/velero-backup.json');
  });
});
