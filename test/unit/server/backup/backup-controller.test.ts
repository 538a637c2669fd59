/**
 * The Backup controller: its decisions table by table, and its reconcile against an in-memory API server
 * (validation, start with the server's defaults, another process's claim, resume after restarts), in milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { Kinds, newBackupStorageLocation, type Backup } from '../../../../src/api/index.js';
import { backupReconciler } from '../../../../src/server/backup/backup-controller.js';
import { ATTEMPTS_ANNOTATION, backupStep, runStep, startBackup } from '../../../../src/server/backup/backup-decisions.js';
import { UPLOADING_ANNOTATION } from '../../../../src/server/backup/operations-decisions.js';
import { HEARTBEAT_ANNOTATION, RUNNER_ANNOTATION } from '../../../../src/server/backup/run-claim.js';
import { DEFAULT_SERVER_CONFIG } from '../../../../src/server/context.js';
import { backup } from '../../../support/builders.js';
import { FakeKube } from '../../../support/fake-kube.js';
import { NAMESPACE, serverContext } from '../../../support/server-context.js';

const NOW = new Date('2026-01-01T00:00:00Z');

describe('which road a Backup takes', () => {
  it.each<[string, Backup, boolean, ReturnType<typeof backupStep>]>([
    ['a new one is validated', backup('b').build(), false, { step: 'validate' }],
    ['New is validated', backup('b').phase('New').build(), false, { step: 'validate' }],
    ['InProgress not running here is run (a restart)', backup('b').phase('InProgress').build(), false, { step: 'run' }],
    ['InProgress running here is left to its run', backup('b').phase('InProgress').build(), true, { step: 'none' }],
    ['Finalizing without item operations is run again', backup('b').phase('Finalizing').build(), false, { step: 'run' }],
    ['Finalizing with item operations belongs to the operations controller', backup('b').phase('Finalizing').status({ backupItemOperationsAttempted: 2 }).build(), false, { step: 'none' }],
    ['an upload cut short is run again', backup('b').phase('WaitingForPluginOperations').annotation(UPLOADING_ANNOTATION, 'true').build(), false, { step: 'run' }],
    ['WaitingForPluginOperations belongs to the operations controller', backup('b').phase('WaitingForPluginOperations').build(), false, { step: 'none' }],
    ['Completed is done', backup('b').phase('Completed').build(), false, { step: 'none' }],
  ])('%s', (_title, b, running, expected) => {
    expect(backupStep(b, { running })).toEqual(expected);
  });
});

describe('whether a run may start', () => {
  const me = 'server-a';
  const beat = (runner: string, at: Date) => backup('b').phase('InProgress').annotation(RUNNER_ANNOTATION, runner).annotation(HEARTBEAT_ANNOTATION, at.toISOString());
  it.each<[string, Backup, boolean, ReturnType<typeof runStep>]>([
    ['this process started it: first attempt', backup('b').phase('InProgress').build(), true, { step: 'run', attempts: 1, restarted: false }],
    ['found after a restart: run again, counted', backup('b').phase('InProgress').annotation(ATTEMPTS_ANNOTATION, '1').build(), false, { step: 'run', attempts: 2, restarted: true }],
    ['interrupted three times: given up', backup('b').phase('InProgress').annotation(ATTEMPTS_ANNOTATION, '3').build(), false, { step: 'give-up' }],
    ["another process's fresh heartbeat: wait for it", beat('server-b', new Date(NOW.getTime() - 10_000)).build(), false, { step: 'wait', runner: 'server-b', retryInMs: 36_000 }],
    ["another process's stale heartbeat: taken over", beat('server-b', new Date(NOW.getTime() - 90_000)).build(), false, { step: 'run', attempts: 1, restarted: true }],
    ['its own heartbeat: run', beat(me, NOW).build(), true, { step: 'run', attempts: 1, restarted: false }],
  ])('%s', (_title, b, startedHere, expected) => {
    expect(runStep(b, { me, nowMs: NOW.getTime(), startedHere })).toEqual(expected);
  });
});

describe('starting a validated Backup', () => {
  it('fills in the server defaults as Velero writes them, expiring after the TTL', () => {
    const b = backup('b').build();
    expect(startBackup(b, { locationName: 'default', k8s: { gitVersion: 'v1.36.3', major: '1', minor: '36' }, now: NOW, config: DEFAULT_SERVER_CONFIG })).toBe(true);
    expect(b.spec).toMatchObject({ storageLocation: 'default', ttl: '720h0m0s', defaultVolumesToFsBackup: false, snapshotMoveData: false, csiSnapshotTimeout: '10m0s', itemOperationTimeout: '4h0m0s' });
    expect(b.status).toMatchObject({ phase: 'InProgress', startTimestamp: '2026-01-01T00:00:00Z', expiration: '2026-01-31T00:00:00Z', validationErrors: null });
    expect(b.metadata.labels).toEqual({ 'velero.io/storage-location': 'default' });
    expect(b.metadata.annotations).toMatchObject({ 'velero.io/source-cluster-k8s-gitversion': 'v1.36.3', 'velero.io/resource-timeout': '10m0s' });
  });

  it('keeps what the Backup sets, and a zero TTL or timeout takes the default', () => {
    const b = backup('b').spec({ ttl: '1h', itemOperationTimeout: '0s', snapshotMoveData: true }).build();
    startBackup(b, { locationName: 'other', k8s: undefined, now: NOW, config: DEFAULT_SERVER_CONFIG });
    expect(b.spec).toMatchObject({ storageLocation: 'other', ttl: '1h0m0s', itemOperationTimeout: '4h0m0s', snapshotMoveData: true });
    expect(b.status?.expiration).toBe('2026-01-01T01:00:00Z');
    const zero = backup('b').spec({ ttl: '0s' }).build();
    startBackup(zero, { locationName: 'default', k8s: undefined, now: NOW, config: DEFAULT_SERVER_CONFIG });
    expect(zero.spec.ttl).toBe('720h0m0s');
  });

  it('writes nothing once it left New', () => {
    expect(startBackup(backup('b').phase('InProgress').build(), { locationName: 'default', k8s: undefined, now: NOW, config: DEFAULT_SERVER_CONFIG })).toBe(false);
  });
});

describe('the Backup controller against the API server', () => {
  const location = (name = 'default') => newBackupStorageLocation({ namespace: NAMESPACE, name, spec: { provider: 'aws', objectStorage: { bucket: 'b' } } });
  const setup = (...backups: Backup[]) => {
    const fake = new FakeKube();
    for (const b of backups) fake.put({ ...Kinds.Backup, namespace: NAMESPACE }, b);
    const ctx = serverContext(fake);
    return { fake, ctx, reconcile: backupReconciler(ctx), read: (name: string) => fake.get<Backup>({ ...Kinds.Backup, namespace: NAMESPACE }, name) };
  };
  const key = (name: string) => ({ namespace: NAMESPACE, name });

  it('fails validation with every reason when the location is missing', async () => {
    const { reconcile, read } = setup(backup('b').spec({ labelSelector: { matchLabels: { app: 'a' } }, orLabelSelectors: [{ matchLabels: { app: 'b' } }] }).build());
    await reconcile(key('b'));
    expect(read('b')?.status?.phase).toBe('FailedValidation');
    expect(read('b')?.status?.validationErrors).toEqual([
      'encountered labelSelector as well as orLabelSelectors in backup spec, only one can be specified',
      expect.stringContaining("the default 'default' wasn't found"),
    ]);
  });

  it('starts a valid Backup: InProgress with the defaults, on the injected clock', async () => {
    const { fake, reconcile, read } = setup(backup('b').build());
    fake.put({ ...Kinds.BackupStorageLocation, namespace: NAMESPACE }, location());
    await reconcile(key('b'));
    expect(read('b')?.status).toMatchObject({ phase: 'InProgress', startTimestamp: '2026-01-01T00:00:00Z', expiration: '2026-01-31T00:00:00Z' });
  });

  it("waits while another server process's heartbeat is fresh, without writing", async () => {
    const b = backup('b').phase('InProgress').annotation(RUNNER_ANNOTATION, 'old-pod').annotation(HEARTBEAT_ANNOTATION, NOW.toISOString()).build();
    const { fake, reconcile } = setup(b);
    expect(await reconcile(key('b'))).toEqual({ requeueAfterMs: 46_000 });
    expect(fake.writes).toEqual([]);
  });

  it('resumes a Backup interrupted by a restart, counting the attempt (and fails it when its location is gone)', async () => {
    const { reconcile, read } = setup(backup('b').phase('InProgress').spec({ storageLocation: 'gone' }).annotation(ATTEMPTS_ANNOTATION, '1').build());
    await reconcile(key('b'));
    expect(read('b')?.status).toMatchObject({ phase: 'Failed', failureReason: 'backup storage location gone no longer exists', completionTimestamp: '2026-01-01T00:00:00Z' });
    expect(read('b')?.metadata.annotations?.[ATTEMPTS_ANNOTATION]).toBeUndefined();
  });

  it('gives up on a Backup interrupted by three restarts', async () => {
    const { reconcile, read } = setup(backup('b').phase('InProgress').annotation(ATTEMPTS_ANNOTATION, '3').build());
    await reconcile(key('b'));
    expect(read('b')?.status).toMatchObject({ phase: 'Failed', failureReason: 'the server stopped 3 times while running this backup; giving up' });
  });

  it('leaves a finished Backup alone', async () => {
    const { fake, reconcile } = setup(backup('b').phase('Completed').build());
    await reconcile(key('b'));
    expect(fake.writes).toEqual([]);
  });
});
