/**
 * The Restore controller: its decisions table by table, and its reconcile against an in-memory API server and a
 * filesystem storage location (validation, start, a run that cannot read its backup, resume after restarts,
 * deletion), in milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { Kinds, newBackupStorageLocation, type Restore, type RestorePhase } from '../../../../src/api/index.js';
import { restoreReconciler } from '../../../../src/server/restore/restore-controller.js';
import {
  ATTEMPTS_ANNOTATION,
  attemptStep,
  phaseAfterFinalize,
  phaseAfterWait,
  restoreStep,
  startRestore,
} from '../../../../src/server/restore/restore-decisions.js';
import { backup, restore } from '../../../support/builders.js';
import { FakeKube } from '../../../support/fake-kube.js';
import { NAMESPACE, serverContext } from '../../../support/server-context.js';
import { tempRoots } from '../../../support/temp-roots.js';

describe('which road a Restore takes', () => {
  it.each<[string, Restore, boolean, ReturnType<typeof restoreStep>]>([
    ['a new one is validated and started', restore('r').build(), false, { step: 'start' }],
    ['InProgress not running here is run again (a restart)', restore('r').phase('InProgress').build(), false, { step: 'resume' }],
    ['InProgress running here is left to its run', restore('r').phase('InProgress').build(), true, { step: 'none' }],
    ['waiting for item operations looks at them', restore('r').phase('WaitingForPluginOperationsPartiallyFailed').build(), false, { step: 'wait' }],
    ['Finalizing completes the files', restore('r').phase('Finalizing').build(), false, { step: 'finalize' }],
    ['a deleted one has its files removed', restore('r').phase('Completed').deleting().build(), false, { step: 'remove-files' }],
    ['a deleted one still running waits for its run', restore('r').phase('InProgress').deleting().build(), true, { step: 'none' }],
    ['Completed is done', restore('r').phase('Completed').build(), false, { step: 'none' }],
    ['FailedValidation is done', restore('r').phase('FailedValidation').build(), false, { step: 'none' }],
  ])('%s', (_title, r, running, expected) => {
    expect(restoreStep(r, { running })).toEqual(expected);
  });
});

describe('the phases of a Restore', () => {
  it('starts InProgress at the time given, with the default item operation timeout when it sets none or zero', () => {
    const r = restore('r').spec({ backupName: 'b1', itemOperationTimeout: '0s' }).status({ validationErrors: ['old'] }).build();
    expect(startRestore(r, { backupName: 'b1', now: new Date('2026-01-01T00:00:00Z'), defaultItemOperationTimeoutMs: 4 * 3600_000 })).toBe(true);
    expect(r.spec.itemOperationTimeout).toBe('4h0m0s');
    expect(r.status).toEqual({ phase: 'InProgress', startTimestamp: '2026-01-01T00:00:00Z' });
    expect(startRestore(r, { backupName: 'b1', now: new Date(), defaultItemOperationTimeoutMs: 1 })).toBe(false);
  });

  it("writes the schedule's latest backup into a restore that names only the schedule, and keeps a named backup", () => {
    const fromSchedule = restore('r').spec({ scheduleName: 'daily' }).build();
    expect(startRestore(fromSchedule, { backupName: 'daily-20260101000000', now: new Date(), defaultItemOperationTimeoutMs: 1 })).toBe(true);
    expect(fromSchedule.spec.backupName).toBe('daily-20260101000000');
    const named = restore('r').spec({ backupName: 'b1' }).build();
    expect(startRestore(named, { backupName: 'other', now: new Date(), defaultItemOperationTimeoutMs: 1 })).toBe(true);
    expect(named.spec.backupName).toBe('b1');
  });

  it.each([
    [1, { step: 'run' }],
    [3, { step: 'run' }],
    [4, { step: 'give-up', reason: 'the restore was interrupted by 3 server restarts; giving up' }],
  ])('attempt %i: %j', (attempts, expected) => {
    expect(attemptStep(attempts)).toEqual(expected);
  });

  it.each<[RestorePhase, { done: boolean; failed: number }, RestorePhase]>([
    ['WaitingForPluginOperations', { done: false, failed: 1 }, 'WaitingForPluginOperations'],
    ['WaitingForPluginOperations', { done: true, failed: 0 }, 'Finalizing'],
    ['WaitingForPluginOperations', { done: true, failed: 1 }, 'FinalizingPartiallyFailed'],
    ['WaitingForPluginOperationsPartiallyFailed', { done: true, failed: 0 }, 'FinalizingPartiallyFailed'],
  ])('after waiting in %s with %j: %s', (phase, state, expected) => {
    expect(phaseAfterWait(phase, state)).toBe(expected);
  });

  it.each<[RestorePhase, number, RestorePhase]>([
    ['Finalizing', 0, 'Completed'],
    ['Finalizing', 2, 'PartiallyFailed'],
    ['FinalizingPartiallyFailed', 0, 'PartiallyFailed'],
  ])('after finalizing %s with %i errors: %s', (phase, errors, expected) => {
    expect(phaseAfterFinalize(phase, errors)).toBe(expected);
  });
});

describe('the Restore controller against the API server', () => {
  const newRoot = tempRoots('cairn-restore-test-');

  /** A fake cluster with a Completed backup `b` in a filesystem location that holds none of its files. */
  function setup(...restores: Restore[]) {
    const fake = new FakeKube();
    const root = newRoot();
    fake.put({ ...Kinds.BackupStorageLocation, namespace: NAMESPACE }, newBackupStorageLocation({ namespace: NAMESPACE, name: 'default', spec: { provider: 'filesystem', objectStorage: { bucket: 'b' }, config: { root } } }));
    fake.put({ ...Kinds.Backup, namespace: NAMESPACE }, backup('b').phase('Completed').spec({ storageLocation: 'default' }).build());
    for (const r of restores) fake.put({ ...Kinds.Restore, namespace: NAMESPACE }, r);
    const ctx = serverContext(fake);
    const read = (name: string) => fake.get<Restore>({ ...Kinds.Restore, namespace: NAMESPACE }, name);
    return { fake, reconcile: restoreReconciler(ctx), read };
  }
  const key = (name: string) => ({ namespace: NAMESPACE, name });

  it('fails validation when the backup does not exist', async () => {
    const { reconcile, read } = setup(restore('r').spec({ backupName: 'missing' }).build());
    await reconcile(key('r'));
    expect(read('r')?.status?.phase).toBe('FailedValidation');
    expect(read('r')?.status?.validationErrors?.join('\n')).toContain('missing');
  });

  it('starts a valid Restore and runs it: a backup whose files are not in storage fails it with the reason', async () => {
    const { reconcile, read } = setup(restore('r').spec({ backupName: 'b' }).build());
    await reconcile(key('r'));
    const r = read('r');
    expect(r?.status).toMatchObject({ phase: 'Failed', startTimestamp: '2026-01-01T00:00:00Z', completionTimestamp: '2026-01-01T00:00:00Z' });
    expect(r?.status?.failureReason).toBeTruthy();
    expect(r?.metadata.annotations?.[ATTEMPTS_ANNOTATION]).toBeUndefined();
    expect(r?.metadata.finalizers).toEqual(['restores.velero.io/external-resources-finalizer']);
  });

  it('runs a Restore interrupted by a restart again, and gives up after three restarts', async () => {
    const { reconcile, read } = setup(restore('again').spec({ backupName: 'b' }).phase('InProgress').annotation(ATTEMPTS_ANNOTATION, '1').build(), restore('tired').spec({ backupName: 'b' }).phase('InProgress').annotation(ATTEMPTS_ANNOTATION, '3').build());
    await reconcile(key('again'));
    expect(read('again')?.status?.phase).toBe('Failed');
    expect(read('again')?.status?.failureReason).not.toContain('server restarts');
    await reconcile(key('tired'));
    expect(read('tired')?.status).toMatchObject({ phase: 'Failed', failureReason: 'the restore was interrupted by 3 server restarts; giving up' });
  });

  it('removes a deleted Restore\'s finalizer once its files are gone from storage', async () => {
    const { fake, reconcile, read } = setup(restore('r').spec({ backupName: 'b' }).phase('Completed').finalizers('restores.velero.io/external-resources-finalizer').build());
    await fake.custom.deleteNamespacedCustomObject({ ...Kinds.Restore, namespace: NAMESPACE, name: 'r' });
    await reconcile(key('r'));
    expect(read('r')).toBeUndefined();
  });
});
