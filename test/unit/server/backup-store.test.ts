import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { newBackup } from '../../../src/api/index.js';
import { FaultInjectingObjectStore, FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { BackupStore } from '../../../src/storage/backup-store.js';
import { backupFileKey, downloadKey, restoreFileKey } from '../../../src/storage/layout.js';

function tempStore(): FilesystemObjectStore {
  return new FilesystemObjectStore({ root: mkdtempSync(join(tmpdir(), 'cairn-bsl-')), durability: 'none' });
}

const backup = newBackup({ namespace: 'velero', name: 'b1', spec: { includedNamespaces: ['app'] } });

describe('storage layout', () => {
  it.each([
    ['metadata', 'backups/b1/velero-backup.json'],
    ['contents', 'backups/b1/b1.tar.gz'],
    ['log', 'backups/b1/b1-logs.gz'],
    ['results', 'backups/b1/b1-results.gz'],
    ['resourceList', 'backups/b1/b1-resource-list.json.gz'],
    ['volumeInfo', 'backups/b1/b1-volumeinfo.json.gz'],
    ['podVolumeBackups', 'backups/b1/b1-podvolumebackups.json.gz'],
    ['itemOperations', 'backups/b1/b1-itemoperations.json.gz'],
  ] as const)('names the backup file %s as Velero does', (file, key) => {
    expect(backupFileKey('b1', file)).toBe(key);
  });

  it.each([
    ['log', 'restores/r1/restore-r1-logs.gz'],
    ['results', 'restores/r1/restore-r1-results.gz'],
    ['resourceList', 'restores/r1/restore-r1-resource-list.json.gz'],
    ['volumeInfo', 'restores/r1/r1-volumeinfo.json.gz'],
  ] as const)('names the restore file %s as Velero does, volume info without the restore- prefix', (file, key) => {
    expect(restoreFileKey('r1', file)).toBe(key);
  });

  it('names download targets by the same keys', () => {
    expect(downloadKey('BackupLog', 'b1')).toBe('backups/b1/b1-logs.gz');
    expect(downloadKey('RestoreVolumeInfo', 'r1')).toBe('restores/r1/r1-volumeinfo.json.gz');
  });
});

describe('BackupStore', () => {
  it('writes a backup and reads it back', async () => {
    const store = new BackupStore(tempStore());
    await store.putBackup({ name: 'b1', metadata: backup, contents: Buffer.from('tar'), log: 'line 1\n', files: { results: { warnings: {}, errors: {} }, volumeInfo: [] } });
    expect(await store.listBackupDirs()).toEqual(['b1']);
    expect(await store.backupExists('b1')).toBe(true);
    expect(await store.getBackupMetadata('b1')).toEqual(backup);
    expect(await store.getBackupJson('b1', 'volumeInfo')).toEqual([]);
    expect(await store.getBackupJson('b1', 'resourceList')).toBeUndefined();
    const log = await store.getBackupFile('b1', 'log');
    expect(gunzipSync(log as Buffer).toString()).toBe('line 1\n');
    const raw = await store.objects.get('backups/b1/velero-backup.json');
    expect(raw.toString()).toContain('\n  "apiVersion": "velero.io/v1"');
  });

  it('removes the metadata when the tarball upload fails, so no backup appears without contents', async () => {
    const inner = tempStore();
    const faulty = new FaultInjectingObjectStore(inner);
    faulty.addFault({ ops: ['put'], keyPrefix: 'backups/b2/b2.tar.gz' });
    const store = new BackupStore(faulty);
    await expect(store.putBackup({ name: 'b2', metadata: backup, contents: Buffer.from('x'), log: '', files: {} })).rejects.toThrow();
    expect(await new BackupStore(inner).backupExists('b2')).toBe(false);
  });

  it('deletes every object of a backup and nothing else', async () => {
    const store = new BackupStore(tempStore());
    for (const name of ['a', 'b']) await store.putBackup({ name, metadata: backup, contents: Buffer.from('t'), log: '', files: { results: {} } });
    expect(await store.deleteBackup('a')).toBe(4);
    expect(await store.listBackupDirs()).toEqual(['b']);
  });

  it('reports unexpected top-level directories', async () => {
    const objects = tempStore();
    const store = new BackupStore(objects);
    await objects.put('backups/x/velero-backup.json', Buffer.from('{}'));
    await objects.put('kopia/ns/config', Buffer.from('{}'));
    expect(await store.layoutProblems()).toEqual([]);
    await objects.put('photos/cat.jpg', Buffer.from('meow'));
    expect(await store.layoutProblems()).toEqual(['unexpected directory "photos/" at the top level of the location']);
  });
});
