import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Kinds, Labels, newBackupStorageLocation, newPodVolumeBackup, type Backup, type PodVolumeBackup } from '../../../../src/api/index.js';
import { backupOperationsReconciler } from '../../../../src/server/backup/backup-operations-controller.js';
import { addErrors, finalPhase, operationsStep, ownedByOperations, trackOutcome } from '../../../../src/server/backup/operations-decisions.js';
import type { DataUploadTracking } from '../../../../src/server/datamover/backup-tracking.js';
import type { TrackingState } from '../../../../src/server/podvolume/backup-tracking.js';
import { backup } from '../../../support/builders.js';
import { FakeKube } from '../../../support/fake-kube.js';
import { NAMESPACE, serverContext } from '../../../support/server-context.js';
import { tempRoots } from '../../../support/temp-roots.js';

describe('backup operations controller', () => {
  it('owns waiting backups, and finalizing ones only when they have PVBs', () => {
    expect(ownedByOperations({ status: { phase: 'WaitingForPluginOperations' } })).toBe(true);
    expect(ownedByOperations({ status: { phase: 'WaitingForPluginOperationsPartiallyFailed' } })).toBe(true);
    expect(ownedByOperations({ status: { phase: 'Finalizing', backupItemOperationsAttempted: 2 } })).toBe(true);
    expect(ownedByOperations({ status: { phase: 'FinalizingPartiallyFailed', backupItemOperationsAttempted: 1 } })).toBe(true);
    // A resource-only backup left Finalizing by a stopped server is the backup controller's to run again.
    expect(ownedByOperations({ status: { phase: 'Finalizing' } })).toBe(false);
    expect(ownedByOperations({ status: { phase: 'InProgress', backupItemOperationsAttempted: 2 } })).toBe(false);
    expect(ownedByOperations({ status: { phase: 'Completed', backupItemOperationsAttempted: 2 } })).toBe(false);
    // Still being uploaded by the backup controller (or left so by a server that died mid-upload): not tracked yet.
    expect(ownedByOperations({ metadata: { annotations: { 'backup.cairn.io/uploading': 'true' } }, status: { phase: 'WaitingForPluginOperations' } })).toBe(false);
  });

  it('adds PVB errors to the results once, however often the finalization runs', () => {
    const stored = { warnings: { namespaces: { app: ['w'] } }, errors: { namespaces: { app: ['item error'] } } };
    const errors = [{ namespace: 'app', message: 'pod volume backup failed: boom' }, { message: 'timed out waiting for all PodVolumeBackups to complete' }];
    const once = addErrors(stored, errors);
    expect(once).toEqual({
      warnings: { namespaces: { app: ['w'] } },
      errors: { namespaces: { app: ['item error', 'pod volume backup failed: boom'] }, velero: ['timed out waiting for all PodVolumeBackups to complete'] },
    });
    expect(addErrors(once, errors)).toEqual(once);
    expect(stored.errors.namespaces.app).toEqual(['item error']);
  });
});

describe('the operations of a backup, decided', () => {
  const NOW = Date.parse('2026-01-01T00:00:00Z');
  const pvbs = (t: Partial<TrackingState> = {}): TrackingState => ({ attempted: 0, completed: 0, failed: 0, pending: [], allTerminal: true, timedOut: false, deadlineMs: NOW + 3600_000, ...t });
  const dus = (t: Partial<DataUploadTracking> = {}): DataUploadTracking => ({ attempted: 0, completed: 0, failed: 0, pending: [], expired: [], done: true, nextDeadlineMs: undefined, ...t });
  const waiting = backup('b').phase('WaitingForPluginOperations').build();

  it.each<[string, Backup | undefined, ReturnType<typeof operationsStep>]>([
    ['a waiting backup is tracked', waiting, { step: 'track' }],
    ['a finalizing backup with operations is finalized (also after a restart)', backup('b').phase('FinalizingPartiallyFailed').status({ backupItemOperationsAttempted: 1 }).build(), { step: 'finalize' }],
    ['a backup being uploaded is not touched yet', backup('b').phase('WaitingForPluginOperations').annotation('backup.cairn.io/uploading', 'true').build(), { step: 'none' }],
    ['a gone backup is not touched', undefined, { step: 'none' }],
  ])('%s', (_title, b, expected) => {
    expect(operationsStep(b)).toEqual(expected);
  });

  it.each<[string, Backup, TrackingState, DataUploadTracking, Partial<ReturnType<typeof trackOutcome>>]>([
    ['PVBs running: waiting, looked at again within the resync', waiting, pvbs({ attempted: 2, completed: 1, allTerminal: false, pending: [{} as PodVolumeBackup] }), dus(), { phase: 'WaitingForPluginOperations', done: false, attempted: 2, completed: 1, requeueAfterMs: 10_000 }],
    ['a PVB failed: partially failed, still waiting', waiting, pvbs({ attempted: 2, failed: 1, allTerminal: false }), dus(), { phase: 'WaitingForPluginOperationsPartiallyFailed', done: false, failed: 1 }],
    ['the fs-backup deadline comes first: looked at again then', waiting, pvbs({ attempted: 1, allTerminal: false, deadlineMs: NOW + 3000 }), dus(), { requeueAfterMs: 3000 }],
    ['all PVBs and DataUploads done: Finalizing', waiting, pvbs({ attempted: 1, completed: 1 }), dus({ attempted: 1, completed: 1 }), { phase: 'Finalizing', done: true, attempted: 2, completed: 2, requeueAfterMs: undefined }],
    ['timed out: finalizing, partially failed', waiting, pvbs({ attempted: 1, allTerminal: false, timedOut: true }), dus(), { phase: 'FinalizingPartiallyFailed', done: true }],
    ['a DataUpload past its deadline: partially failed', waiting, pvbs(), dus({ attempted: 1, expired: [{} as never], done: true }), { phase: 'FinalizingPartiallyFailed', done: true }],
    ['already partially failed stays so', backup('b').phase('WaitingForPluginOperationsPartiallyFailed').build(), pvbs({ attempted: 1, completed: 1 }), dus(), { phase: 'FinalizingPartiallyFailed' }],
  ])('%s', (_title, b, p, d, expected) => {
    expect(trackOutcome({ backup: b, pvbs: p, dataUploads: d, nowMs: NOW })).toMatchObject(expected);
  });

  it.each([
    ['Finalizing', 0, 'Completed'],
    ['Finalizing', 1, 'PartiallyFailed'],
    ['FinalizingPartiallyFailed', 0, 'PartiallyFailed'],
  ])('finishes %s with %i errors as %s', (phase, errors, expected) => {
    expect(finalPhase(phase, errors)).toBe(expected);
  });
});

describe('the operations controller against the API server', () => {
  const newRoot = tempRoots('cairn-operations-test-');

  const pvb = (name: string, phase?: 'InProgress' | 'Completed' | 'Failed') =>
    ({
      ...newPodVolumeBackup({ namespace: NAMESPACE, name, labels: { [Labels.BackupUID]: 'uid-b', [Labels.BackupName]: 'b' }, spec: { node: 'n', pod: { namespace: 'app', name: 'web' }, volume: name, backupStorageLocation: 'default', repoIdentifier: '' } }),
      ...(phase ? { status: { phase, ...(phase === 'Completed' ? { snapshotID: `snap-${name}` } : {}) } } : {}),
    }) as PodVolumeBackup;

  function setup(b: Backup, ...podVolumeBackups: PodVolumeBackup[]) {
    const fake = new FakeKube();
    const root = newRoot();
    fake.put({ ...Kinds.BackupStorageLocation, namespace: NAMESPACE }, newBackupStorageLocation({ namespace: NAMESPACE, name: 'default', spec: { provider: 'filesystem', objectStorage: { bucket: 'bkt' }, config: { root } } }));
    fake.put({ ...Kinds.Backup, namespace: NAMESPACE }, b);
    for (const p of podVolumeBackups) fake.put({ ...Kinds.PodVolumeBackup, namespace: NAMESPACE }, p);
    const ctx = serverContext(fake);
    return {
      fake,
      ctx,
      reconcile: backupOperationsReconciler(ctx),
      read: () => fake.get<Backup>({ ...Kinds.Backup, namespace: NAMESPACE }, 'b'),
      readPvb: (name: string) => fake.get<PodVolumeBackup>({ ...Kinds.PodVolumeBackup, namespace: NAMESPACE }, name),
      file: (name: string) => join(root, 'bkt', 'backups', 'b', name),
    };
  }
  const key = { namespace: NAMESPACE, name: 'b' };
  const waiting = () => backup('b').uid('uid-b').phase('WaitingForPluginOperations').spec({ storageLocation: 'default' }).status({ startTimestamp: '2026-01-01T00:00:00Z', backupItemOperationsAttempted: 2 });

  it('counts the PVBs while they run, and looks again within the resync period', async () => {
    const { reconcile, read } = setup(waiting().build(), pvb('v1', 'Completed'), pvb('v2', 'InProgress'));
    expect(await reconcile(key)).toEqual({ requeueAfterMs: 10_000 });
    expect(read()?.status).toMatchObject({ phase: 'WaitingForPluginOperations', backupItemOperationsAttempted: 2, backupItemOperationsCompleted: 1, backupItemOperationsFailed: 0 });
  });

  it('cancels the PVBs still running at the fs-backup timeout and finalizes partially failed', async () => {
    const { ctx, reconcile, read, readPvb } = setup(waiting().build(), pvb('v1', 'Completed'), pvb('v2', 'InProgress'));
    await ctx.clock.settle(240 * 60_000);
    expect(await reconcile(key)).toEqual({ requeueAfterMs: 0 });
    expect(readPvb('v2')?.spec.cancel).toBe(true);
    expect(readPvb('v1')?.spec.cancel).toBeUndefined();
    expect(read()?.status?.phase).toBe('FinalizingPartiallyFailed');
  });

  it('finalizes once every PVB is done: the files in storage, then Completed (a restarted server does the same)', async () => {
    const { reconcile, read, file } = setup(waiting().build(), pvb('v1', 'Completed'), pvb('v2', 'Completed'));
    await reconcile(key);
    expect(read()?.status?.phase).toBe('Finalizing');
    await reconcile(key);
    expect(read()?.status).toMatchObject({ phase: 'Completed', backupItemOperationsAttempted: 2, backupItemOperationsCompleted: 2, backupItemOperationsFailed: 0, completionTimestamp: '2026-01-01T00:00:00Z' });
    const stored = JSON.parse(gunzipSync(readFileSync(file('b-podvolumebackups.json.gz'))).toString()) as PodVolumeBackup[];
    expect(stored.map((p) => p.status?.snapshotID)).toEqual(['snap-v1', 'snap-v2']);
    expect(existsSync(file('b-itemoperations.json.gz'))).toBe(true);
    expect(JSON.parse(readFileSync(file('velero-backup.json'), 'utf8'))).toMatchObject({ status: { phase: 'Completed' } });
  });

  it('stores velero-backup.json with the final phase before the Backup shows it, so a restart in between finalizes again', async () => {
    const { fake, reconcile, read, file } = setup(waiting().build(), pvb('v1', 'Completed'), pvb('v2', 'Completed'));
    await reconcile(key);
    expect(read()?.status?.phase).toBe('Finalizing');
    const storedPhase = () => (JSON.parse(readFileSync(file('velero-backup.json'), 'utf8')) as Backup).status?.phase;
    const seenAtWrite: (string | undefined)[] = [];
    fake.beforeWrite = (w) => {
      if (w.plural !== 'backups' || (w.verb !== 'status' && w.verb !== 'replace')) return;
      seenAtWrite.push(storedPhase());
      // The server stops right there, once.
      if (seenAtWrite.length === 1) throw new Error('server stopped');
    };
    await reconcile(key).catch(() => undefined);
    expect(seenAtWrite).toEqual(['Completed']);
    expect(read()?.status?.phase).toBe('Finalizing');
    await reconcile(key);
    expect(read()?.status?.phase).toBe('Completed');
    expect(storedPhase()).toBe('Completed');
  });

  it('ends PartiallyFailed when a PVB failed, with its error in the results', async () => {
    const failed = { ...pvb('v2', 'Failed'), status: { phase: 'Failed' as const, message: 'disk full' } };
    const { reconcile, read, file } = setup(waiting().build(), pvb('v1', 'Completed'), failed);
    await reconcile(key);
    await reconcile(key);
    expect(read()?.status).toMatchObject({ phase: 'PartiallyFailed', backupItemOperationsFailed: 1 });
    const results = JSON.parse(gunzipSync(readFileSync(file('b-results.gz'))).toString()) as { errors: { namespaces?: Record<string, string[]> } };
    expect(JSON.stringify(results.errors)).toContain('disk full');
  });
});
