/**
 * Canceling a Restore: what a cancel request does in each phase, what the move to Canceling and the end write, and
 * the cancel controller against an in-memory API server (PodVolumeRestores asked to cancel, waited for, Canceled).
 */
import { describe, expect, it } from 'vitest';
import { CANCEL_REQUESTED_ANNOTATION, Kinds, type PodVolumeRestore, type Restore, type RestorePhase } from '../../../../src/api/index.js';
import { RESTORE_EXEC_HOOKS_ANNOTATION } from '../../../../src/server/hooks/restore-hooks.js';
import {
  RESTORE_CANCEL_POLL_MS,
  RESTORE_CANCEL_WAIT_LIMIT_MS,
  beginRestoreCanceling,
  endRestoreCanceled,
  restoreCancelStep,
  restoreCancelingStep,
  type RestoreCancelStep,
} from '../../../../src/server/restore/cancel-decisions.js';
import { restoreCancelReconciler } from '../../../../src/server/restore/restore-cancel-controller.js';
import { ATTEMPTS_ANNOTATION, restoreStep, startRestore } from '../../../../src/server/restore/restore-decisions.js';
import { RunRegistry } from '../../../../src/server/run-registry.js';
import { restore } from '../../../support/builders.js';
import { FakeKube } from '../../../support/fake-kube.js';
import { NAMESPACE, serverContext } from '../../../support/server-context.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const canceled = (phase: string) => restore('r').phase(phase as RestorePhase).annotation(CANCEL_REQUESTED_ANNOTATION, '2026-01-01T00:00:00Z');

describe('what a cancel request does to a Restore, by phase', () => {
  it.each<[string, Restore, boolean, RestoreCancelStep]>([
    ['no request: nothing', restore('r').phase('InProgress').build(), true, { step: 'none' }],
    ['New: Canceled at once', canceled('New').build(), false, { step: 'end-new' }],
    ['not yet seen by the server: Canceled at once', canceled('').build(), false, { step: 'end-new' }],
    ['InProgress run by this process: its run is stopped', canceled('InProgress').build(), true, { step: 'abort-run' }],
    ['InProgress left by a server that stopped: Canceling', canceled('InProgress').build(), false, { step: 'begin' }],
    ['WaitingForPluginOperations: Canceling', canceled('WaitingForPluginOperations').build(), false, { step: 'begin' }],
    ['Finalizing (exec hooks): Canceling', canceled('Finalizing').build(), false, { step: 'begin' }],
    ['Canceling: carried out', canceled('Canceling').build(), false, { step: 'cancel' }],
    ['Completed: too late, nothing', canceled('Completed').build(), false, { step: 'none' }],
    ['Failed: nothing', canceled('Failed').build(), false, { step: 'none' }],
    ['Canceled: nothing more', canceled('Canceled').build(), false, { step: 'none' }],
    ['being deleted: nothing (its deletion goes on)', { ...canceled('InProgress').build(), metadata: { ...canceled('InProgress').build().metadata, deletionTimestamp: NOW } } as Restore, false, { step: 'none' }],
  ])('%s', (_title, r, runningHere, expected) => {
    expect(restoreCancelStep(r, { runningHere })).toEqual(expected);
  });

  it('keeps the restore controller off a restore asked to be canceled', () => {
    expect(restoreStep(canceled('New').build(), { running: false })).toEqual({ step: 'none' });
    expect(restoreStep(canceled('InProgress').build(), { running: false })).toEqual({ step: 'none' });
    expect(restoreStep(canceled('WaitingForPluginOperations').build(), { running: false })).toEqual({ step: 'none' });
    expect(startRestore(canceled('New').build(), { backupName: 'b', now: NOW, defaultItemOperationTimeoutMs: 1000 })).toBe(false);
  });
});

describe('moving a Restore to Canceling and ending it Canceled', () => {
  it('Canceling drops the attempt count and the exec hooks still waiting', () => {
    const r = canceled('WaitingForPluginOperations').annotation(ATTEMPTS_ANNOTATION, '1').annotation(RESTORE_EXEC_HOOKS_ANNOTATION, '[]').build();
    expect(beginRestoreCanceling(r)).toBe(true);
    expect(r.status?.phase).toBe('Canceling');
    expect(Object.keys(r.metadata.annotations ?? {})).toEqual([CANCEL_REQUESTED_ANNOTATION]);
  });

  it('writes nothing without a request, for New, or once finished', () => {
    expect(beginRestoreCanceling(restore('r').phase('InProgress').build())).toBe(false);
    expect(beginRestoreCanceling(canceled('New').build())).toBe(false);
    expect(beginRestoreCanceling(canceled('Completed').build())).toBe(false);
  });

  it('ends Canceling or New with a request Canceled', () => {
    for (const r of [canceled('Canceling').build(), canceled('New').build()]) {
      expect(endRestoreCanceled(r, NOW)).toBe(true);
      expect(r.status).toMatchObject({ phase: 'Canceled', completionTimestamp: '2026-01-01T00:00:00Z' });
    }
    expect(endRestoreCanceled(canceled('InProgress').build(), NOW)).toBe(false);
  });

  it('waits for running volume operations, up to a limit', () => {
    const at = NOW.getTime();
    expect(restoreCancelingStep(0, { requestedAtMs: at, nowMs: at })).toEqual({ step: 'end', gaveUp: false });
    expect(restoreCancelingStep(2, { requestedAtMs: at, nowMs: at })).toEqual({ step: 'wait', requeueAfterMs: RESTORE_CANCEL_POLL_MS });
    expect(restoreCancelingStep(1, { requestedAtMs: at - RESTORE_CANCEL_WAIT_LIMIT_MS, nowMs: at })).toEqual({ step: 'end', gaveUp: true });
  });
});

describe('the restore cancel controller against the API server', () => {
  const pvrs = { ...Kinds.PodVolumeRestore, namespace: NAMESPACE };
  const pvr = (name: string, phase: string, cancel = false): PodVolumeRestore =>
    ({
      apiVersion: 'velero.io/v1',
      kind: 'PodVolumeRestore',
      metadata: { name, namespace: NAMESPACE, labels: { 'velero.io/restore-uid': 'uid-r', 'velero.io/restore-name': 'r' } },
      spec: { pod: { kind: 'Pod', namespace: 'app', name: 'p' }, volume: 'data', backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia', snapshotID: 's1', sourceNamespace: 'app', cancel },
      status: { phase },
    }) as PodVolumeRestore;
  const setup = (r: Restore) => {
    const fake = new FakeKube();
    fake.put({ ...Kinds.Restore, namespace: NAMESPACE }, r);
    const runs = new RunRegistry();
    return { fake, runs, reconcile: restoreCancelReconciler({ ...serverContext(fake), runs }), read: () => fake.get<Restore>({ ...Kinds.Restore, namespace: NAMESPACE }, 'r') };
  };
  const key = { namespace: NAMESPACE, name: 'r' };

  it('stops the run of this process', async () => {
    const { runs, reconcile, fake } = setup(canceled('InProgress').build());
    const run = runs.start(`${NAMESPACE}/r`);
    await reconcile(key);
    expect(run.canceled).toBe(true);
    expect(fake.writes).toEqual([]);
  });

  it('asks the running PodVolumeRestores to cancel, waits for them, then ends Canceled', async () => {
    const { fake, reconcile, read } = setup(canceled('WaitingForPluginOperations').build());
    fake.put(pvrs, pvr('r-running', 'InProgress'));
    fake.put(pvrs, pvr('r-done', 'Completed'));
    await reconcile(key);
    expect(read()?.status?.phase).toBe('Canceling');
    expect(await reconcile(key)).toEqual({ requeueAfterMs: RESTORE_CANCEL_POLL_MS });
    expect(fake.get<PodVolumeRestore>(pvrs, 'r-running')?.spec.cancel).toBe(true);
    expect(fake.get<PodVolumeRestore>(pvrs, 'r-done')?.spec.cancel).toBe(false);
    fake.put(pvrs, pvr('r-running', 'Canceled', true));
    await reconcile(key);
    expect(read()?.status).toMatchObject({ phase: 'Canceled', completionTimestamp: '2026-01-01T00:00:00Z' });
  });
});
