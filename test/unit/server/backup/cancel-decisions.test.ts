/**
 * Canceling a Backup: what a cancel request does in each phase, what the move to Canceling and the end write, and how
 * long a Canceling backup waits for its volume operations; then the cancel controller against an in-memory API server.
 */
import { describe, expect, it } from 'vitest';
import { CANCEL_REQUESTED_ANNOTATION, Kinds, volumeOperationRunning, type Backup, type BackupPhase, type PodVolumeBackup } from '../../../../src/api/index.js';
import { ATTEMPTS_ANNOTATION, backupStep } from '../../../../src/server/backup/backup-decisions.js';
import { backupCancelReconciler } from '../../../../src/server/backup/backup-cancel-controller.js';
import { backupReconciler } from '../../../../src/server/backup/backup-controller.js';
import {
  CANCEL_POLL_MS,
  CANCEL_WAIT_LIMIT_MS,
  backupCancelStep,
  beginCanceling,
  cancelingStep,
  endCanceled,
  type BackupCancelStep,
} from '../../../../src/server/backup/cancel-decisions.js';
import { UPLOADING_ANNOTATION, operationsStep } from '../../../../src/server/backup/operations-decisions.js';
import { HEARTBEAT_ANNOTATION, RUNNER_ANNOTATION } from '../../../../src/server/backup/run-claim.js';
import { RunRegistry } from '../../../../src/server/run-registry.js';
import { deletionStep } from '../../../../src/server/delete-backup-request-controller.js';
import { backup } from '../../../support/builders.js';
import { FakeKube } from '../../../support/fake-kube.js';
import { NAMESPACE, serverContext } from '../../../support/server-context.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const ME = 'server-a';
const canceled = (phase: string) => backup('b').phase(phase as BackupPhase).annotation(CANCEL_REQUESTED_ANNOTATION, NOW.toISOString());

describe('what a cancel request does to a Backup, by phase', () => {
  const claimedBy = (runner: string, agoMs: number) => canceled('InProgress').annotation(RUNNER_ANNOTATION, runner).annotation(HEARTBEAT_ANNOTATION, new Date(NOW.getTime() - agoMs).toISOString());
  it.each<[string, Backup, boolean, BackupCancelStep]>([
    ['no request: nothing', backup('b').phase('InProgress').build(), true, { step: 'none' }],
    ['New: Canceled at once', canceled('New').build(), false, { step: 'end-new' }],
    ['not yet seen by the server: Canceled at once', canceled('').build(), false, { step: 'end-new' }],
    ['InProgress run by this process: its run is stopped', canceled('InProgress').build(), true, { step: 'abort-run' }],
    ['Finalizing (uploading) run by this process: its run is stopped', canceled('Finalizing').build(), true, { step: 'abort-run' }],
    ['InProgress run by another live process: that one stops it', claimedBy('server-b', 10_000).build(), false, { step: 'wait-for-runner', runner: 'server-b', retryInMs: 36_000 }],
    ['InProgress left by a server that stopped (stale claim): Canceling', claimedBy('server-b', 90_000).build(), false, { step: 'begin' }],
    ['InProgress without a claim, not run here (restart): Canceling', canceled('InProgress').build(), false, { step: 'begin' }],
    ['an upload cut short (not run here): Canceling', canceled('WaitingForPluginOperations').annotation(UPLOADING_ANNOTATION, 'true').build(), false, { step: 'begin' }],
    ['WaitingForPluginOperations: the operations controller writes Canceling', canceled('WaitingForPluginOperations').build(), false, { step: 'operations' }],
    ['WaitingForPluginOperationsPartiallyFailed: the same', canceled('WaitingForPluginOperationsPartiallyFailed').build(), false, { step: 'operations' }],
    ['Finalizing with item operations: the same', canceled('Finalizing').status({ backupItemOperationsAttempted: 1 }).build(), false, { step: 'operations' }],
    ['Canceling: the cancel is carried out', canceled('Canceling').build(), false, { step: 'cancel' }],
    ['Canceling after a restart, whatever the annotations', backup('b').phase('Canceling').build(), false, { step: 'cancel' }],
    ['Completed: too late, nothing', canceled('Completed').build(), false, { step: 'none' }],
    ['PartiallyFailed: nothing', canceled('PartiallyFailed').build(), false, { step: 'none' }],
    ['Failed: nothing', canceled('Failed').build(), false, { step: 'none' }],
    ['FailedValidation: nothing', canceled('FailedValidation').build(), false, { step: 'none' }],
    ['Canceled: nothing more', canceled('Canceled').build(), false, { step: 'none' }],
    ['Deleting: nothing', canceled('Deleting').build(), false, { step: 'none' }],
  ])('%s', (_title, b, runningHere, expected) => {
    expect(backupCancelStep(b, { runningHere, me: ME, nowMs: NOW.getTime() })).toEqual(expected);
  });

  it('keeps the other controllers off a backup asked to be canceled', () => {
    expect(backupStep(canceled('New').build(), { running: false })).toEqual({ step: 'none' });
    expect(backupStep(canceled('InProgress').build(), { running: false })).toEqual({ step: 'none' });
    expect(operationsStep(canceled('WaitingForPluginOperations').build())).toEqual({ step: 'cancel' });
    expect(operationsStep(canceled('Canceling').build())).toEqual({ step: 'none' });
    expect(operationsStep(backup('b').phase('WaitingForPluginOperations').build())).toEqual({ step: 'track' });
  });
});

describe('moving to Canceling and ending Canceled', () => {
  it('Canceling drops the run claim, the attempt count and the upload mark', () => {
    const b = canceled('InProgress').annotation(RUNNER_ANNOTATION, ME).annotation(HEARTBEAT_ANNOTATION, NOW.toISOString()).annotation(ATTEMPTS_ANNOTATION, '2').annotation(UPLOADING_ANNOTATION, 'true').build();
    expect(beginCanceling(b)).toBe(true);
    expect(b.status?.phase).toBe('Canceling');
    expect(b.metadata.annotations).toEqual({ [CANCEL_REQUESTED_ANNOTATION]: NOW.toISOString() });
  });

  it.each([
    ['no request', backup('b').phase('InProgress').build()],
    ['New (ended directly)', canceled('New').build()],
    ['already Canceling', canceled('Canceling').build()],
    ['Completed', canceled('Completed').build()],
  ])('writes nothing when %s', (_title, b) => {
    expect(beginCanceling(b)).toBe(false);
  });

  it('ends Canceling, or New with a request, Canceled at the time given', () => {
    for (const b of [canceled('Canceling').build(), canceled('New').build(), canceled('').build()]) {
      expect(endCanceled(b, NOW)).toBe(true);
      expect(b.status).toMatchObject({ phase: 'Canceled', completionTimestamp: '2026-01-01T00:00:00Z' });
    }
    expect(endCanceled(backup('b').phase('New').build(), NOW)).toBe(false);
    expect(endCanceled(canceled('InProgress').build(), NOW)).toBe(false);
    expect(endCanceled(canceled('Canceled').build(), NOW)).toBe(false);
  });
});

describe('a Canceling backup and its volume operations', () => {
  const at = NOW.getTime();
  it.each([
    ['all ended: clean up', { podVolumeBackupsRunning: 0, dataUploadsRunning: 0 }, at, { step: 'clean-up', gaveUp: false }],
    ['a PodVolumeBackup still stopping: wait', { podVolumeBackupsRunning: 1, dataUploadsRunning: 0 }, at, { step: 'wait', requeueAfterMs: CANCEL_POLL_MS }],
    ['a DataUpload still stopping: wait', { podVolumeBackupsRunning: 0, dataUploadsRunning: 2 }, at - 60_000, { step: 'wait', requeueAfterMs: CANCEL_POLL_MS }],
    ['still running past the limit: clean up without them', { podVolumeBackupsRunning: 1, dataUploadsRunning: 0 }, at - CANCEL_WAIT_LIMIT_MS, { step: 'clean-up', gaveUp: true }],
  ] as const)('%s', (_title, state, requestedAtMs, expected) => {
    expect(cancelingStep(state, { requestedAtMs, nowMs: at })).toEqual(expected);
  });
});

describe('which volume operations a canceled backup or restore waits for', () => {
  it.each([
    ['InProgress', false, true],
    ['Accepted, asked to cancel', true, true],
    ['Canceling', true, true],
    ['New, not asked yet', false, true],
    ['New, asked to cancel (no node agent starts it any more)', true, false],
    ['Completed', false, false],
    ['Failed', false, false],
    ['Canceled', true, false],
  ] as const)('%s', (title, cancel, running) => {
    const phase = title.split(',')[0]!;
    expect(volumeOperationRunning({ spec: { cancel }, status: { phase } })).toBe(running);
  });
});

describe('deleting a running backup', () => {
  it.each([
    ['InProgress', 'cancel-first'],
    ['WaitingForPluginOperations', 'cancel-first'],
    ['Finalizing', 'cancel-first'],
    ['Canceling', 'cancel-first'],
    ['Completed', 'check'],
    ['Canceled', 'check'],
    ['New', 'check'],
  ])('%s: %s', (phase, step) => {
    expect(deletionStep(backup('b').phase(phase as BackupPhase).build())).toEqual({ step });
  });
});

describe('the cancel controller against the API server', () => {
  const setup = (...backups: Backup[]) => {
    const fake = new FakeKube();
    for (const b of backups) fake.put({ ...Kinds.Backup, namespace: NAMESPACE }, b);
    const ctx = serverContext(fake);
    const runs = new RunRegistry();
    return { fake, runs, reconcile: backupCancelReconciler({ ...ctx, runs }), read: (name: string) => fake.get<Backup>({ ...Kinds.Backup, namespace: NAMESPACE }, name) };
  };
  const key = { namespace: NAMESPACE, name: 'b' };
  const pvb = (name: string, phase: string, cancel = false): PodVolumeBackup =>
    ({
      apiVersion: 'velero.io/v1',
      kind: 'PodVolumeBackup',
      metadata: { name, namespace: NAMESPACE, labels: { 'velero.io/backup-uid': 'uid-b', 'velero.io/backup-name': 'b' } },
      spec: { node: 'n1', pod: { kind: 'Pod', namespace: 'app', name: 'p' }, volume: 'data', backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia', cancel },
      status: { phase },
    }) as PodVolumeBackup;

  it('ends a New backup Canceled without touching anything else', async () => {
    const { fake, reconcile, read } = setup(canceled('New').build());
    await reconcile(key);
    expect(read('b')?.status).toMatchObject({ phase: 'Canceled', completionTimestamp: '2026-01-01T00:00:00Z' });
    expect(fake.writes.map((w) => w.plural)).toEqual(['backups']);
  });

  it('stops the run of this process and writes nothing itself', async () => {
    const { fake, runs, reconcile } = setup(canceled('InProgress').build());
    const run = runs.start('b');
    expect(await reconcile(key)).toEqual({ requeueAfterMs: CANCEL_POLL_MS * 5 });
    expect(run.signal.aborted).toBe(true);
    expect(run.canceled).toBe(true);
    expect(fake.writes).toEqual([]);
  });

  it('moves a run left by a stopped server to Canceling', async () => {
    const { reconcile, read } = setup(canceled('InProgress').annotation(ATTEMPTS_ANNOTATION, '1').build());
    await reconcile(key);
    expect(read('b')?.status?.phase).toBe('Canceling');
    expect(read('b')?.metadata.annotations?.[ATTEMPTS_ANNOTATION]).toBeUndefined();
  });

  it('asks the running PodVolumeBackups to cancel and waits for them, then ends Canceled', async () => {
    const { fake, reconcile, read } = setup(canceled('Canceling').spec({ storageLocation: 'gone' }).build());
    const pvbs = { ...Kinds.PodVolumeBackup, namespace: NAMESPACE };
    fake.put(pvbs, pvb('b-running', 'InProgress'));
    fake.put(pvbs, pvb('b-done', 'Completed'));
    expect(await reconcile(key)).toEqual({ requeueAfterMs: CANCEL_POLL_MS });
    expect(fake.get<PodVolumeBackup>(pvbs, 'b-running')?.spec.cancel).toBe(true);
    expect(fake.get<PodVolumeBackup>(pvbs, 'b-running')?.status?.message).toBe('PVB is in status "InProgress" and its backup is canceled, mark it as cancel');
    expect(fake.get<PodVolumeBackup>(pvbs, 'b-done')?.spec.cancel).toBe(false);
    expect(read('b')?.status?.phase).toBe('Canceling');

    // Asked again (a restart, a resync): nothing is written twice.
    const before = fake.writes.length;
    expect(await reconcile(key)).toEqual({ requeueAfterMs: CANCEL_POLL_MS });
    expect(fake.writes.length).toBe(before);

    // The node agent ends it; the next look cleans up (its location is gone: nothing to delete there) and ends it.
    fake.put(pvbs, pvb('b-running', 'Canceled', true));
    await reconcile(key);
    expect(read('b')?.status).toMatchObject({ phase: 'Canceled', completionTimestamp: '2026-01-01T00:00:00Z' });
  });

  it('does not wait for a PodVolumeBackup no node agent took: asked to cancel, it never starts', async () => {
    const { fake, reconcile, read } = setup(canceled('Canceling').spec({ storageLocation: 'gone' }).build());
    fake.put({ ...Kinds.PodVolumeBackup, namespace: NAMESPACE }, pvb('b-new', 'New'));
    await reconcile(key);
    expect(fake.get<PodVolumeBackup>({ ...Kinds.PodVolumeBackup, namespace: NAMESPACE }, 'b-new')?.spec.cancel).toBe(true);
    expect(read('b')?.status?.phase).toBe('Canceled');
  });
});

describe('the backup controller and a cancel', () => {
  const backups = { ...Kinds.Backup, namespace: NAMESPACE };
  const setup = (b: Backup) => {
    const fake = new FakeKube();
    fake.put(backups, b);
    const runs = new RunRegistry();
    return { fake, runs, reconcile: backupReconciler({ ...serverContext(fake), runs }), read: () => fake.get<Backup>(backups, 'b') };
  };

  it('does not run a backup asked to be canceled', async () => {
    const { fake, reconcile } = setup(canceled('InProgress').build());
    await reconcile({ namespace: NAMESPACE, name: 'b' });
    expect(fake.writes).toEqual([]);
  });

  it('a run that ends while a cancel is asked writes Canceling, not its own end, and lets the run go', async () => {
    const { fake, runs, reconcile, read } = setup(backup('b').phase('InProgress').spec({ storageLocation: 'gone' }).build());
    let writes = 0;
    fake.beforeWrite = (w) => {
      if (w.plural !== 'backups' || ++writes !== 2) return;
      // After the run claimed the backup, the user asks to cancel; the run then fails (its location is gone).
      const current = fake.get<Backup>(backups, 'b')!;
      fake.put(backups, { ...current, metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, [CANCEL_REQUESTED_ANNOTATION]: NOW.toISOString() } } });
    };
    await reconcile({ namespace: NAMESPACE, name: 'b' });
    expect(read()?.status?.phase).toBe('Canceling');
    expect(read()?.status?.failureReason).toBeUndefined();
    expect(read()?.metadata.annotations?.[RUNNER_ANNOTATION]).toBeUndefined();
    expect(runs.has('b')).toBe(false);
  });
});
