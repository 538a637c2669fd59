import { describe, expect, it } from 'vitest';
import type { Backup, BackupOperation } from '../../../src/api/index.js';
import { createLogger } from '../../../src/base/logger.js';
import { cancelPendingOperations, checkOperations, failedOperationErrors, isPluginOperation, TIMED_OUT_OPERATION, type OperationsAction } from '../../../src/server/plugin-operations.js';
import type { OperationProgress } from '../../../src/plugins/item-actions/types.js';
import { ExternalPlugins } from '../../../src/plugins/external/index.js';
import { ItemActionRegistry } from '../../../src/plugins/item-actions/registry.js';
import { registerBuiltinActions } from '../../../src/server/item-actions/builtin.js';
import { ServerPlugins, serverPluginList } from '../../../src/server/plugins.js';

const log = createLogger({ level: 'fatal' });
const backup = { metadata: { name: 'b1', namespace: 'velero' }, spec: {} } as unknown as Backup;
const NOW = new Date('2026-01-01T10:00:00Z');

function op(id: string, phase: 'New' | 'InProgress' | 'Completed' | 'Failed' = 'New', created = '2026-01-01T09:59:00Z', action = 'x.io/async'): BackupOperation {
  return {
    spec: { backupName: 'b1', backupUID: 'u', backupItemAction: action, resourceIdentifier: { Group: '', Resource: 'configmaps', Namespace: 'ns', Name: id }, operationID: id, postOperationItems: null },
    status: { phase, created },
  };
}

/** An action that answers from a table and records the cancels. */
function action(progress: Record<string, OperationProgress | Error>): OperationsAction<Backup> & { cancelled: string[] } {
  const cancelled: string[] = [];
  return {
    cancelled,
    async progress(id) {
      const p = progress[id];
      if (p instanceof Error) throw p;
      return p!;
    },
    async cancel(id) {
      cancelled.push(id);
    },
  };
}

const running = (n: number, started = true): OperationProgress => ({
  completed: false,
  nCompleted: n,
  nTotal: 8,
  operationUnits: 'seconds',
  description: 'counting seconds',
  ...(started ? { started: new Date('2026-01-01T09:59:01.250Z'), updated: new Date('2026-01-01T09:59:59Z') } : {}),
});

describe('plugin operations', () => {
  it('copy progress in; New becomes InProgress once the plugin reports a start; done ones are left alone', async () => {
    const a = action({ a: running(3), b: running(0, false) });
    const state = await checkOperations({ operations: [op('a'), op('b'), op('c', 'Completed')], owner: backup, kind: 'BackupItemActionV2', actionFor: async () => a, timeoutMs: 3600_000, now: NOW, log });
    expect(state.operations[0]!.status).toEqual({
      phase: 'InProgress',
      created: '2026-01-01T09:59:00Z',
      nCompleted: 3,
      nTotal: 8,
      operationUnits: 'seconds',
      description: 'counting seconds',
      started: '2026-01-01T09:59:01Z',
      updated: '2026-01-01T09:59:59Z',
    });
    expect(state.operations[1]!.status.phase).toBe('New');
    expect(state.operations[2]).toEqual(op('c', 'Completed'));
    expect(state).toMatchObject({ changed: true, pending: 2, completed: 1, failed: 0, errors: [] });
    // The same answers again change nothing.
    const again = await checkOperations({ operations: state.operations, owner: backup, kind: 'BackupItemActionV2', actionFor: async () => a, timeoutMs: 3600_000, now: NOW, log });
    expect(again.changed).toBe(false);
  });

  it('complete, fail with the plugin error, and say why an action cannot be asked, in Velero words', async () => {
    const a = action({ done: { ...running(8), completed: true }, bad: { ...running(2), completed: true, error: 'snapshot failed' }, broken: new Error('plugin x exited during Progress') });
    const state = await checkOperations({
      operations: [op('done'), op('bad'), op('broken'), op('orphan', 'New', '2026-01-01T09:59:00Z', 'gone.io/action')],
      owner: backup,
      kind: 'BackupItemActionV2',
      actionFor: async (name) => (name === 'x.io/async' ? a : undefined),
      timeoutMs: 3600_000,
      now: NOW,
      log,
    });
    expect(state.operations.map((o) => [o.status.phase, o.status.error])).toEqual([
      ['Completed', undefined],
      ['Failed', 'snapshot failed'],
      ['Failed', 'plugin x exited during Progress'],
      ['Failed', 'unable to get valid BackupItemActionV2 for "gone.io/action"'],
    ]);
    expect(state.errors).toEqual([
      'snapshot failed, plugin: x.io/async',
      'plugin x exited during Progress, plugin: x.io/async',
      'unable to get valid BackupItemActionV2 for "gone.io/action", plugin: gone.io/action',
    ]);
    expect(failedOperationErrors(state.operations)).toEqual(state.errors);
    expect(state).toMatchObject({ pending: 0, completed: 1, failed: 3 });
  });

  it('cancel an operation still running past the item operation timeout', async () => {
    const a = action({ slow: running(1) });
    const state = await checkOperations({ operations: [op('slow', 'InProgress', '2026-01-01T09:00:00Z')], owner: backup, kind: 'BackupItemActionV2', actionFor: async () => a, timeoutMs: 30 * 60_000, now: NOW, log });
    expect(a.cancelled).toEqual(['slow']);
    expect(state.operations[0]!.status).toMatchObject({ phase: 'Failed', error: TIMED_OUT_OPERATION });
    expect(state.errors).toEqual(['Asynchronous action timed out, plugin: x.io/async']);
  });

  it('leave the operations of pod volume backups and data uploads to their own tracking', () => {
    expect(isPluginOperation(op('a', 'New', '', 'velero.io/pod-volume-backup'))).toBe(false);
    expect(isPluginOperation(op('a', 'New', '', 'velero.io/csi-pvc-backupper'))).toBe(false);
    expect(isPluginOperation(op('a', 'New', '', 'velero.io/csi-volumesnapshot-backupper'))).toBe(false);
    expect(isPluginOperation(op('a'))).toBe(true);
  });
});

describe('the plugins a server lists (plugin get)', () => {
  const command = '/plugins/velero-plugin-for-aws';
  const external = new ExternalPlugins(
    [
      { command, kind: 'ObjectStore', name: 'velero.io/aws' },
      { command, kind: 'VolumeSnapshotter', name: 'velero.io/aws' },
      { command: '/plugins/x', kind: 'BackupItemAction', name: 'velero.io/pod' },
      { command: '/plugins/x', kind: 'BackupItemActionV2', name: 'x.io/async' },
    ],
    { callTimeoutMs: 1000 },
  );
  const builtins = registerBuiltinActions(new ItemActionRegistry());

  it('lists built-ins and plugins once each; a plugin a built-in shadows is left out', () => {
    const listed = serverPluginList(new ServerPlugins(external, new Set(), log), builtins);
    const key = (p: { name: string; kind: string }) => `${p.kind} ${p.name}`;
    expect(listed.map(key)).toContain('ObjectStore velero.io/aws');
    expect(listed.map(key)).toContain('VolumeSnapshotter velero.io/aws');
    expect(listed.map(key)).toContain('BackupItemActionV2 x.io/async');
    expect(listed.map(key)).toContain('ObjectStore velero.io/filesystem');
    expect(listed.filter((p) => key(p) === 'ObjectStore velero.io/aws')).toHaveLength(1);
    // The built-in velero.io/pod action shadows the plugin of that name.
    expect(listed.filter((p) => key(p) === 'BackupItemAction velero.io/pod')).toHaveLength(1);
    expect(new ServerPlugins(external, new Set(), log).shadowed(builtins).map(key)).toEqual(['ObjectStore velero.io/aws', 'BackupItemAction velero.io/pod']);
    expect(new ServerPlugins(external, new Set(['velero.io/aws']), log).shadowed(builtins).map(key)).toEqual(['BackupItemAction velero.io/pod']);
  });

  it('without plugins, lists the built-ins', () => {
    expect(serverPluginList(undefined, builtins).length).toBe(builtins.listed.length + 2);
  });
});

describe('cancelling the operations of a canceled backup', () => {
  it('asks the action of each New or InProgress operation to cancel it, and leaves finished ones alone', async () => {
    const a = action({});
    const asked = await cancelPendingOperations({ operations: [op('a'), op('b', 'InProgress'), op('c', 'Completed'), op('d', 'Failed')], owner: backup, actionFor: async () => a, log });
    expect(asked).toEqual(['a', 'b']);
    expect(a.cancelled).toEqual(['a', 'b']);
  });

  it('passes over an action that is gone or whose cancel fails, and goes on with the next', async () => {
    const failing: OperationsAction<Backup> = {
      async cancel() {
        throw new Error('plugin exited');
      },
    };
    const a = action({});
    const byName: Record<string, OperationsAction<Backup> | undefined> = { 'x.io/failing': failing, 'x.io/async': a };
    const asked = await cancelPendingOperations({
      operations: [op('gone', 'InProgress', undefined, 'x.io/gone'), op('fails', 'InProgress', undefined, 'x.io/failing'), op('ok', 'InProgress')],
      owner: backup,
      actionFor: async (name) => byName[name],
      log,
    });
    expect(asked).toEqual(['ok']);
    expect(a.cancelled).toEqual(['ok']);
  });
});
