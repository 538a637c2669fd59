import { describe, expect, it } from 'vitest';
import { newRestore, type RestoreResourceHookSpec } from '../../../../src/api/index.js';
import { createLogger } from '../../../../src/base/logger.js';
import type { Kube } from '../../../../src/kube/client.js';
import { initHookContainers, initRestoreHookAction } from '../../../../src/server/item-actions/restore-init-hooks.js';
import type { UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import { restoreExecHooksFor, restoreHookReadiness, type PendingRestoreHooks } from '../../../../src/server/hooks/restore-hooks.js';

function pod(annotations: Record<string, string> = {}, initContainers: { name: string }[] = []): UnstructuredObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'db-0', namespace: 'shop-copy', uid: 'pod-uid', labels: { app: 'db' }, annotations },
    spec: { containers: [{ name: 'db' }, { name: 'sidecar' }], initContainers },
  };
}

const hooks: RestoreResourceHookSpec[] = [
  {
    name: 'prepare',
    includedNamespaces: ['shop-copy'],
    labelSelector: { matchLabels: { app: 'db' } },
    postHooks: [
      { init: { initContainers: [{ name: 'fix-perms', image: 'busybox', command: ['chown', '-R', '999', '/data'] }], timeout: '2m' } },
      { exec: { command: ['/bin/check'], waitTimeout: '5m', execTimeout: '1m', onError: 'Continue' } },
      { exec: { container: 'sidecar', command: ['reload'], waitForReady: true } },
    ],
  },
  { name: 'other-namespace', includedNamespaces: ['else'], postHooks: [{ exec: { command: ['nope'] } }] },
];

describe('restore init hooks', () => {
  const log = createLogger({ level: 'fatal' });
  const ctx = (spec: RestoreResourceHookSpec[]) => {
    const warnings: string[] = [];
    const restore = newRestore({ name: 'r1', spec: { backupName: 'b', hooks: { resources: spec } } });
    restore.metadata.uid = 'r-uid';
    return { warnings, ctx: { restore, backup: {} as never, kube: {} as Kube, log, itemFromBackup: pod(), warn: (m: string) => void warnings.push(m) } };
  };

  it("puts the spec's init containers after restore-wait and before the pod's own, and warns that timeout is not acted on", async () => {
    const { ctx: c, warnings } = ctx(hooks);
    const out = await initRestoreHookAction.execute(pod({}, [{ name: 'restore-wait' }, { name: 'own-init' }]), c);
    expect((out.item.spec as { initContainers: { name: string }[] }).initContainers.map((i) => i.name)).toEqual(['restore-wait', 'fix-perms', 'own-init']);
    expect(warnings).toEqual(['pod shop-copy/db-0: spec.hooks.resources[0].postHooks[0].init.timeout is not acted on (as in Velero): the init hook containers run as long as they take']);
  });

  it('takes the annotation hook instead of the spec, with a generated name that a restart makes again', () => {
    const p = pod({ 'init.hook.restore.velero.io/container-image': 'busybox', 'init.hook.restore.velero.io/command': '["sh","-c","true"]' });
    const a = initHookContainers({ pod: p, namespace: 'shop-copy', hooks, restoreUid: 'r-uid' });
    const b = initHookContainers({ pod: p, namespace: 'shop-copy', hooks, restoreUid: 'r-uid' });
    expect(a.initContainers).toHaveLength(1);
    expect(a.initContainers[0]).toMatchObject({ image: 'busybox', command: ['sh', '-c', 'true'] });
    expect(String(a.initContainers[0]?.name)).toMatch(/^velero-restore-init-[0-9a-f]{8}$/);
    expect(b.initContainers[0]?.name).toBe(a.initContainers[0]?.name);
  });

  it('refuses an init container without name, image or command, naming the field', () => {
    const bad: RestoreResourceHookSpec[] = [{ name: 'x', postHooks: [{ init: { initContainers: [{ name: 'a', image: 'busybox' }] } }] }];
    expect(() => initHookContainers({ pod: pod(), namespace: 'shop-copy', hooks: bad, restoreUid: 'u' })).toThrow(
      'invalid InitContainer in restore hook spec.hooks.resources[0].postHooks[0].init.initContainers[0]: it has no command (name, image and command are required)',
    );
  });

  it('leaves pods the hooks do not select alone', async () => {
    const { ctx: c } = ctx([{ name: 'x', includedNamespaces: ['else'], postHooks: [{ init: { initContainers: [{ name: 'a', image: 'i', command: ['c'] }] } }] }]);
    const item = pod();
    expect((await initRestoreHookAction.execute(item, c)).item).toBe(item);
  });
});

describe('restore exec hooks', () => {
  const asHookPod = (p: UnstructuredObject) => p as unknown as Parameters<typeof restoreExecHooksFor>[0];

  it("groups the spec's exec hooks by container, with Velero's defaults", () => {
    expect(restoreExecHooksFor(asHookPod(pod()), hooks)).toEqual([
      {
        namespace: 'shop-copy',
        pod: 'db-0',
        uid: 'pod-uid',
        container: 'db',
        hooks: [{ name: 'prepare', source: 'spec', index: 1, container: 'db', command: ['/bin/check'], onError: 'Continue', timeoutMs: 60_000, waitTimeoutMs: 300_000, waitForReady: false }],
      },
      {
        namespace: 'shop-copy',
        pod: 'db-0',
        uid: 'pod-uid',
        container: 'sidecar',
        hooks: [{ name: 'prepare', source: 'spec', index: 2, container: 'sidecar', command: ['reload'], onError: 'Fail', timeoutMs: 30_000, waitTimeoutMs: 0, waitForReady: true }],
      },
    ]);
  });

  it('keeps an exec timeout under a millisecond a timeout of its own (1 ms), as backup hooks do', () => {
    const [group] = restoreExecHooksFor(asHookPod(pod({ 'post.hook.restore.velero.io/command': 'sync', 'post.hook.restore.velero.io/exec-timeout': '500us' })), []);
    expect(group?.hooks).toMatchObject([{ timeoutMs: 1 }]);
  });

  it('takes the annotation hook instead, and names a bad annotation in the hook error', () => {
    const p = pod({
      'post.hook.restore.velero.io/command': 'echo restored',
      'post.hook.restore.velero.io/container': 'ghost',
      'post.hook.restore.velero.io/exec-timeout': 'forever',
      'post.hook.restore.velero.io/wait-for-ready': 'maybe',
    });
    const [group] = restoreExecHooksFor(asHookPod(p), hooks);
    expect(group?.hooks[0]?.command).toEqual(['echo restored']);
    expect(group?.hooks[0]?.problem).toBe(
      'annotation post.hook.restore.velero.io/container: container "ghost" does not exist in pod shop-copy/db-0 (it has db, sidecar); annotation post.hook.restore.velero.io/exec-timeout: "forever" is not a duration such as 30s or 5m; annotation post.hook.restore.velero.io/wait-for-ready: "maybe" is neither true nor false',
    );
  });

  const group = (waitForReady = false, waitTimeoutMs = 60_000): PendingRestoreHooks => ({
    namespace: 'shop-copy',
    pod: 'db-0',
    uid: 'pod-uid',
    container: 'db',
    hooks: [{ name: 'h', source: 'spec', index: 0, container: 'db', command: ['x'], onError: 'Fail', timeoutMs: 30_000, waitTimeoutMs, waitForReady }],
  });
  const observed = (running: boolean, ready: boolean, phase = 'Running', uid = 'pod-uid') => ({
    metadata: { uid, creationTimestamp: '2026-03-01T10:00:00Z' },
    status: { phase, containerStatuses: [{ name: 'db', ready, state: running ? { running: {} } : {} }] },
  });
  const now = new Date('2026-03-01T10:00:30Z');

  it.each<[string, Parameters<typeof restoreHookReadiness>[0], string]>([
    ['runs once the container is running and the pod volumes are restored', { group: group(), pod: observed(true, false), podVolumesDone: true, now, limitMs: 4 * 3600_000 }, 'run'],
    ['waits for the pod volume restores', { group: group(), pod: observed(true, false), podVolumesDone: false, now, limitMs: 4 * 3600_000 }, 'wait'],
    ['waits for readiness with waitForReady', { group: group(true), pod: observed(true, false), podVolumesDone: true, now, limitMs: 4 * 3600_000 }, 'wait'],
    ['fails once the waitTimeout has passed', { group: group(false, 10_000), pod: observed(false, false), podVolumesDone: true, now, limitMs: 4 * 3600_000 }, 'fail'],
    ['fails when the pod has ended', { group: group(), pod: observed(false, false, 'Succeeded'), podVolumesDone: true, now, limitMs: 4 * 3600_000 }, 'fail'],
    ['fails when the pod is gone or replaced', { group: group(), pod: observed(true, true, 'Running', 'other'), podVolumesDone: true, now, limitMs: 4 * 3600_000 }, 'fail'],
  ])('%s', (_t, input, state) => {
    expect(restoreHookReadiness(input).state).toBe(state);
  });
});
