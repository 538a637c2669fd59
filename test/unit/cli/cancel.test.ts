/**
 * `backup cancel` / `restore cancel`: which objects may be canceled, the bad-input cases (a name that does not exist:
 * exit code 4; a finished one: exit code 2, nothing written) and the request written, against an in-memory API server.
 */
import { describe, expect, it } from 'vitest';
import { CANCEL_REQUESTED_ANNOTATION, Kinds, parseBackup, parseRestore, type Backup, type BackupPhase, type Restore } from '../../../src/api/index.js';
import { ExitCode, exitCodeFor, OperationFailedError } from '../../../src/base/errors.js';
import { cancelObjects, cancelVerdict, planCancel } from '../../../src/cli/cancel.js';
import { isRunningBackup } from '../../../src/cli/backups.js';
import { fetchOperationLog } from '../../../src/cli/logs.js';
import { customClient } from '../../../src/kube/custom.js';
import { backup, restore } from '../../support/builders.js';
import { FakeKube } from '../../support/fake-kube.js';

const NS = 'velero';
const NOW = new Date('2026-01-01T00:00:00Z');
const requested = <B extends { annotation(k: string, v: string): B }>(b: B): B => b.annotation(CANCEL_REQUESTED_ANNOTATION, NOW.toISOString());

describe('which backups and restores can be canceled', () => {
  it.each([
    ['', 'request'],
    ['New', 'request'],
    ['InProgress', 'request'],
    ['WaitingForPluginOperations', 'request'],
    ['WaitingForPluginOperationsPartiallyFailed', 'request'],
    ['Finalizing', 'request'],
    ['FinalizingPartiallyFailed', 'request'],
    ['Canceling', 'already'],
    ['Canceled', 'already'],
    ['Completed', 'refuse'],
    ['PartiallyFailed', 'refuse'],
    ['Failed', 'refuse'],
    ['FailedValidation', 'refuse'],
    ['Deleting', 'refuse'],
  ])('a backup %s: %s', (phase, action) => {
    expect(cancelVerdict('backup', backup('b').phase(phase as BackupPhase).build()).action).toBe(action);
  });

  it('says what is wrong in one line, naming the object and its phase', () => {
    expect(cancelVerdict('backup', backup('b').phase('Completed').build())).toEqual({ action: 'refuse', message: 'backup "b" has finished (phase Completed); only a backup that is New or still running can be canceled' });
    expect(cancelVerdict('restore', restore('r').phase('Failed').build())).toEqual({ action: 'refuse', message: 'restore "r" has finished (phase Failed); only a restore that is New or still running can be canceled' });
    expect(cancelVerdict('backup', requested(backup('b').phase('InProgress')).build())).toEqual({ action: 'already', message: 'backup "b" is already being canceled' });
  });

  it('refuses a named finished object, but passes over finished ones chosen by --all or a selector', () => {
    const objs = [backup('a').phase('InProgress').build(), backup('b').phase('Completed').build(), backup('c').phase('Canceled').build()];
    expect(() => planCancel('backup', objs, { named: true })).toThrow('NAME: backup "b" has finished (phase Completed)');
    const plan = planCancel('backup', objs, { named: false });
    expect(plan.request.map((b) => b.metadata.name)).toEqual(['a']);
    expect(plan.already).toEqual(['backup "c" is already canceled']);
  });

  it('tells a running backup apart for `backup delete`', () => {
    expect(['InProgress', 'WaitingForPluginOperations', 'Finalizing', 'Canceling'].every((p) => isRunningBackup(backup('b').phase(p as BackupPhase).build()))).toBe(true);
    expect(['', 'New', 'Completed', 'Failed', 'Canceled'].some((p) => isRunningBackup(backup('b').phase(p as BackupPhase).build()))).toBe(false);
  });
});

describe('the cancel command against the API server', () => {
  const setup = (...objs: (Backup | Restore)[]) => {
    const fake = new FakeKube();
    for (const o of objs) fake.put({ ...(o.kind === 'Restore' ? Kinds.Restore : Kinds.Backup), namespace: NS }, o);
    const lines: string[] = [];
    return {
      fake,
      lines,
      backups: customClient<Backup>(fake.kube(), Kinds.Backup, parseBackup),
      restores: customClient<Restore>(fake.kube(), Kinds.Restore, parseRestore),
      out: (l: string) => lines.push(l),
      read: (name: string) => fake.get<Backup>({ ...Kinds.Backup, namespace: NS }, name),
    };
  };

  it('writes the request on each running backup named', async () => {
    const { backups, out, lines, read } = setup(backup('a').phase('InProgress').build(), backup('b').phase('WaitingForPluginOperations').build());
    await cancelObjects({ kind: 'backup', client: backups, namespace: NS, names: ['a', 'b'], out, now: () => NOW });
    expect(read('a')?.metadata.annotations?.[CANCEL_REQUESTED_ANNOTATION]).toBe('2026-01-01T00:00:00Z');
    expect(read('b')?.metadata.annotations?.[CANCEL_REQUESTED_ANNOTATION]).toBe('2026-01-01T00:00:00Z');
    expect(lines[0]).toBe('Request to cancel backup "a" submitted successfully.');
  });

  it('a name that does not exist: exit code 4, nothing written', async () => {
    const { fake, backups, out } = setup(backup('a').phase('InProgress').build());
    const err = await cancelObjects({ kind: 'backup', client: backups, namespace: NS, names: ['a', 'nope'], out }).catch((e: unknown) => e);
    expect(exitCodeFor(err)).toBe(ExitCode.NotFound);
    expect((err as Error).message).toBe('backup "nope" not found in namespace "velero"');
    expect(fake.writes).toEqual([]);
  });

  it('a finished backup among the names: exit code 2, nothing written, not even for the running one', async () => {
    const { fake, backups, out } = setup(backup('a').phase('InProgress').build(), backup('done').phase('Completed').build());
    const err = await cancelObjects({ kind: 'backup', client: backups, namespace: NS, names: ['a', 'done'], out }).catch((e: unknown) => e);
    expect(exitCodeFor(err)).toBe(ExitCode.Usage);
    expect(fake.writes).toEqual([]);
  });

  it('canceling twice is fine: the second says so and writes nothing', async () => {
    const { fake, backups, out, lines } = setup(requested(backup('a').phase('InProgress')).build(), backup('c').phase('Canceled').build());
    await cancelObjects({ kind: 'backup', client: backups, namespace: NS, names: ['a', 'c'], out });
    expect(lines).toEqual(['Backup "a" is already being canceled.', 'Backup "c" is already canceled.']);
    expect(fake.writes).toEqual([]);
  });

  it('asks first unless --confirm, and writes nothing on no', async () => {
    const { fake, backups, out, lines } = setup(backup('a').phase('InProgress').build());
    const asked: string[] = [];
    await cancelObjects({ kind: 'backup', client: backups, namespace: NS, names: ['a'], out, confirm: async (q) => (asked.push(q), false) });
    expect(asked).toEqual(['Cancel backup a? Are you sure you want to continue?']);
    expect(lines).toEqual(['Nothing canceled.']);
    expect(fake.writes).toEqual([]);
  });

  it('--all cancels the running ones only', async () => {
    const { backups, out, lines, read } = setup(backup('a').phase('InProgress').build(), backup('b').phase('Completed').build());
    await cancelObjects({ kind: 'backup', client: backups, namespace: NS, names: [], out });
    expect(read('a')?.metadata.annotations?.[CANCEL_REQUESTED_ANNOTATION]).toBeDefined();
    expect(read('b')?.metadata.annotations?.[CANCEL_REQUESTED_ANNOTATION]).toBeUndefined();
    expect(lines[0]).toBe('Request to cancel backup "a" submitted successfully.');
  });

  it('--all with nothing running says so', async () => {
    const { backups, out, lines } = setup(backup('b').phase('Completed').build());
    await cancelObjects({ kind: 'backup', client: backups, namespace: NS, names: [], out });
    expect(lines).toEqual(['No running backups found']);
  });

  it('a backup that finishes between the check and the write: exit code 1, the request not written', async () => {
    const { fake, backups, out } = setup(backup('a').phase('InProgress').build());
    let raced = false;
    fake.beforeWrite = () => {
      if (raced) return;
      raced = true;
      fake.put({ ...Kinds.Backup, namespace: NS }, backup('a').phase('Completed').build());
      throw Object.assign(new Error('conflict'), { code: 409 });
    };
    const err = await cancelObjects({ kind: 'backup', client: backups, namespace: NS, names: ['a'], out }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationFailedError);
    expect((err as Error).message).toBe('Backup "a" finished (phase Completed) before it could be canceled');
    expect(exitCodeFor(err)).toBe(ExitCode.Failed);
  });

  it('cancels a running restore the same way', async () => {
    const { fake, restores, out, lines } = setup(restore('r').phase('InProgress').build());
    await cancelObjects({ kind: 'restore', client: restores, namespace: NS, names: ['r'], out, now: () => NOW });
    expect(fake.get<Restore>({ ...Kinds.Restore, namespace: NS }, 'r')?.metadata.annotations?.[CANCEL_REQUESTED_ANNOTATION]).toBe('2026-01-01T00:00:00Z');
    expect(lines[0]).toBe('Request to cancel restore "r" submitted successfully.');
  });
});

describe('backup logs of a canceled backup', () => {
  it('says the log was deleted with the backup (exit code 4), without asking the server for it', async () => {
    const fake = new FakeKube();
    fake.put({ ...Kinds.Backup, namespace: NS }, backup('b').phase('Canceled').build());
    const err = await fetchOperationLog(fake.kube(), { kind: 'backup', namespace: NS, name: 'b', timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(exitCodeFor(err)).toBe(ExitCode.NotFound);
    expect((err as Error).message).toBe('backup "b" was canceled: its log was deleted with its files');
    expect(fake.writes).toEqual([]);
  });
});
