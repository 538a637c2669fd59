import { describe, expect, it } from 'vitest';
import { newBackup, newBackupStorageLocation, type Backup } from '../../../src/api/index.js';
import { backupToSync, nextSyncInMs, orphanedBackups, podVolumeBackupsToSync, syncPeriodMs } from '../../../src/server/backup-sync-controller.js';
import { mayForgetOrphanData } from '../../../src/server/orphaned-backup.js';

const now = new Date('2026-01-01T12:00:00Z');

function stored(name: string, status: Backup['status'], extra: Partial<Backup['metadata']> = {}): Backup {
  const b = newBackup({ namespace: 'velero-elsewhere', name, spec: { storageLocation: 'their-default', ttl: '720h0m0s' } });
  return { ...b, metadata: { ...b.metadata, uid: 'old-uid', resourceVersion: '42', ...extra }, ...(status ? { status } : {}) };
}

describe('backupToSync', () => {
  it('imports a completed backup into this namespace and location, without uid or resourceVersion', () => {
    const d = backupToSync({ dirName: 'b1', stored: stored('b1', { phase: 'Completed' }, { labels: { app: 'x' } }), locationName: 'mine', namespace: 'cairn', now });
    expect(d.action).toBe('create');
    if (d.action !== 'create') return;
    expect(d.backup.metadata).toEqual({ name: 'b1', namespace: 'cairn', labels: { app: 'x', 'velero.io/storage-location': 'mine' } });
    expect(d.backup.spec).toEqual({ storageLocation: 'mine', ttl: '720h0m0s' });
    expect(d.backup.status).toEqual({ phase: 'Completed' });
  });

  it('skips backups still being written unless they expired, which come in as PartiallyFailed', () => {
    const finalizing = stored('b2', { phase: 'Finalizing', expiration: '2026-02-01T00:00:00Z' });
    expect(backupToSync({ dirName: 'b2', stored: finalizing, locationName: 'l', namespace: 'n', now })).toEqual({ action: 'skip', reason: 'backup is still Finalizing' });
    const expired = stored('b3', { phase: 'WaitingForPluginOperations', expiration: '2025-12-01T00:00:00Z' });
    const d = backupToSync({ dirName: 'b3', stored: expired, locationName: 'l', namespace: 'n', now });
    expect(d.action === 'create' && d.backup.status?.phase).toBe('PartiallyFailed');
  });

  it('keeps owner references only to Schedules that exist here', () => {
    const owners = [
      { apiVersion: 'velero.io/v1', kind: 'Schedule', name: 'daily', uid: 'u1' },
      { apiVersion: 'velero.io/v1', kind: 'Schedule', name: 'gone', uid: 'u2' },
    ];
    const d = backupToSync({ dirName: 'b4', stored: stored('b4', { phase: 'Completed' }, { ownerReferences: owners }), locationName: 'l', namespace: 'n', now, existingSchedules: new Set(['daily']) });
    expect(d.action === 'create' && d.backup.metadata.ownerReferences?.map((o) => o.name)).toEqual(['daily']);
  });

  it('refuses metadata that names another backup', () => {
    expect(backupToSync({ dirName: 'b5', stored: stored('other', { phase: 'Completed' }), locationName: 'l', namespace: 'n', now }).action).toBe('skip');
  });

  it('shortens long location names in the label as Velero does', () => {
    const long = 'l'.repeat(70);
    const d = backupToSync({ dirName: 'b6', stored: stored('b6', { phase: 'Completed' }), locationName: long, namespace: 'n', now });
    expect(d.action === 'create' && d.backup.metadata.labels?.['velero.io/storage-location']).toHaveLength(63);
  });
});

describe('orphanedBackups', () => {
  const inCluster = (name: string, phase: string, location = 'l', completionTimestamp = '2026-01-01T11:00:00Z') =>
    ({ ...newBackup({ name, spec: { storageLocation: location } }), status: { phase, completionTimestamp } }) as Backup;

  it('lists only finished backups of this location missing from storage', () => {
    const backups = [
      inCluster('kept', 'Completed'),
      inCluster('gone', 'Completed'),
      inCluster('gone-partial', 'PartiallyFailed'),
      inCluster('gone-failed', 'Failed'),
      inCluster('running', 'InProgress'),
      inCluster('other-location', 'Completed', 'other'),
    ];
    expect(orphanedBackups({ clusterBackups: backups, storedNames: new Set(['kept']), locationName: 'l', now })).toEqual(['gone', 'gone-partial']);
  });

  it('gives a backup that just finished time for its files to arrive', () => {
    const fresh = inCluster('fresh', 'Completed', 'l', '2026-01-01T11:59:30Z');
    expect(orphanedBackups({ clusterBackups: [fresh], storedNames: new Set(), locationName: 'l', now })).toEqual([]);
    expect(orphanedBackups({ clusterBackups: [fresh], storedNames: new Set(), locationName: 'l', now: new Date('2026-01-01T12:00:31Z') })).toEqual(['fresh']);
  });
});

describe('podVolumeBackupsToSync', () => {
  it('rewrites namespace, owner, backup uid and location', () => {
    const backup = { ...newBackup({ namespace: 'cairn', name: 'b1' }), metadata: { name: 'b1', namespace: 'cairn', uid: 'new-uid' } } as Backup;
    const storedPvbs = [
      {
        apiVersion: 'velero.io/v1',
        kind: 'PodVolumeBackup',
        metadata: { name: 'b1-abc', namespace: 'velero', uid: 'x', resourceVersion: '9', labels: { 'velero.io/backup-name': 'b1', 'velero.io/backup-uid': 'old' }, ownerReferences: [{ apiVersion: 'velero.io/v1', kind: 'Backup', name: 'b1', uid: 'old' }] },
        spec: { backupStorageLocation: 'theirs', node: 'n1', pod: { kind: 'Pod', namespace: 'app', name: 'p' }, repoIdentifier: '', volume: 'data' },
        status: { phase: 'Completed', snapshotID: 's1' },
      },
      'garbage',
    ];
    const out = podVolumeBackupsToSync({ stored: storedPvbs, backup, locationName: 'mine', namespace: 'cairn' });
    expect(out).toHaveLength(1);
    expect(out[0]!.metadata).toEqual({
      name: 'b1-abc',
      namespace: 'cairn',
      labels: { 'velero.io/backup-name': 'b1', 'velero.io/backup-uid': 'new-uid' },
      ownerReferences: [{ apiVersion: 'velero.io/v1', kind: 'Backup', name: 'b1', uid: 'new-uid', controller: true }],
    });
    expect(out[0]!.spec.backupStorageLocation).toBe('mine');
    expect(out[0]!.status).toEqual({ phase: 'Completed', snapshotID: 's1' });
    expect(podVolumeBackupsToSync({ stored: null, backup, locationName: 'mine', namespace: 'cairn' })).toEqual([]);
  });
});

describe('sync schedule', () => {
  const loc = (spec: object, status?: object) => ({ ...newBackupStorageLocation({ name: 'l', spec: { provider: 'aws', objectStorage: { bucket: 'b' }, ...spec } }), ...(status ? { status } : {}) });

  it('syncs at once when never synced, then every period; 0 disables', () => {
    expect(syncPeriodMs(loc({ backupSyncPeriod: '2s' }), 60_000)).toBe(2_000);
    expect(nextSyncInMs({ location: loc({}), serverDefaultMs: 60_000, now })).toBe(0);
    expect(nextSyncInMs({ location: loc({}, { lastSyncedTime: '2026-01-01T11:59:45Z' }), serverDefaultMs: 60_000, now })).toBe(45_000);
    expect(nextSyncInMs({ location: loc({ backupSyncPeriod: '0s' }), serverDefaultMs: 60_000, now })).toBeUndefined();
  });
});

describe('mayForgetOrphanData', () => {
  const loc = (accessMode?: 'ReadOnly' | 'ReadWrite') => newBackupStorageLocation({ namespace: 'cairn', name: 'l', spec: { provider: 'aws', objectStorage: { bucket: 'b' }, ...(accessMode ? { accessMode } : {}) } });

  it('forgets the volume data of a backup that vanished while others stayed', () => {
    expect(mayForgetOrphanData({ location: loc(), orphans: 1, finishedBackupsOfLocation: 3 })).toEqual({ forget: true });
    expect(mayForgetOrphanData({ location: loc('ReadWrite'), orphans: 2, finishedBackupsOfLocation: 3 })).toEqual({ forget: true });
    expect(mayForgetOrphanData({ location: loc(), orphans: 1, finishedBackupsOfLocation: 1 })).toEqual({ forget: true });
  });

  it('writes nothing into the repositories of a ReadOnly location', () => {
    const d = mayForgetOrphanData({ location: loc('ReadOnly'), orphans: 1, finishedBackupsOfLocation: 3 });
    expect(d.forget).toBe(false);
  });

  it('keeps the data when every backup of the location vanished at once (a wrong bucket or prefix looks the same)', () => {
    const d = mayForgetOrphanData({ location: loc(), orphans: 4, finishedBackupsOfLocation: 4 });
    expect(d).toEqual({ forget: false, reason: expect.stringContaining('all 4 backups of the location vanished') as unknown });
  });
});
