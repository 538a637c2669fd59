import { describe, expect, it } from 'vitest';
import type { BackupSpec, DataUpload, PodVolumeBackup } from '../../../../src/api/index.js';
import { createLogger } from '../../../../src/base/logger.js';
import { ExecError, type ExecRequest, type ExecResult } from '../../../../src/kube/pod-exec.js';
import { backupHookSpecProblems, backupHooksFor, commandFromAnnotation, type HookPod } from '../../../../src/server/hooks/backup-hooks.js';
import { runExecHooks } from '../../../../src/server/hooks/hook-runner.js';
import { postHooksReady, type PendingPostHooks } from '../../../../src/server/hooks/pending-post-hooks.js';

function pod(annotations: Record<string, string> = {}, labels: Record<string, string> = { app: 'db' }, namespace = 'shop'): HookPod {
  return { metadata: { name: 'db-0', namespace, labels, annotations }, spec: { containers: [{ name: 'db' }, { name: 'sidecar' }] } };
}

const hooksSpec: BackupSpec = {
  hooks: {
    resources: [
      {
        name: 'freeze',
        includedNamespaces: ['shop'],
        labelSelector: { matchLabels: { app: 'db' } },
        pre: [{ exec: { command: ['fsfreeze', '-f', '/data'], timeout: '1m' } }, { exec: { container: 'sidecar', command: ['sync'], onError: 'Continue' } }],
        post: [{ exec: { command: ['fsfreeze', '-u', '/data'] } }],
      },
      { name: 'elsewhere', includedNamespaces: ['other'], pre: [{ exec: { command: ['x'] } }] },
      { name: 'not-pods', includedResources: ['deployments'], pre: [{ exec: { command: ['y'] } }] },
      { name: 'pods-by-short-name', includedResources: ['po'], excludedNamespaces: ['kube-system'], post: [{ exec: { command: ['z'] } }] },
    ],
  },
};

describe('which backup hooks run in a pod', () => {
  it('takes the matching spec entries in order, with defaults (first container, Fail, 30s)', () => {
    expect(backupHooksFor(pod(), 'pre', hooksSpec)).toEqual([
      { name: 'freeze', source: 'spec', index: 0, container: 'db', command: ['fsfreeze', '-f', '/data'], onError: 'Fail', timeoutMs: 60_000 },
      { name: 'freeze', source: 'spec', index: 1, container: 'sidecar', command: ['sync'], onError: 'Continue', timeoutMs: 30_000 },
    ]);
    expect(backupHooksFor(pod(), 'post', hooksSpec).map((h) => h.name)).toEqual(['freeze', 'pods-by-short-name']);
    expect(backupHooksFor(pod({}, { app: 'web' }), 'pre', hooksSpec)).toEqual([]);
    expect(backupHooksFor(pod({}, { app: 'db' }, 'kube-system'), 'post', hooksSpec)).toEqual([]);
  });

  it('lets annotations win over the spec, for their phase only', () => {
    const p = pod({ 'pre.hook.backup.velero.io/command': '["/bin/sh","-c","echo hi"]', 'pre.hook.backup.velero.io/container': 'sidecar', 'pre.hook.backup.velero.io/on-error': 'Continue', 'pre.hook.backup.velero.io/timeout': '2m' });
    expect(backupHooksFor(p, 'pre', hooksSpec)).toEqual([{ name: '<from-annotation>', source: 'annotation', index: 0, container: 'sidecar', command: ['/bin/sh', '-c', 'echo hi'], onError: 'Continue', timeoutMs: 120_000 }]);
    expect(backupHooksFor(p, 'post', hooksSpec).map((h) => h.name)).toEqual(['freeze', 'pods-by-short-name']);
  });

  it('keeps a timeout under a millisecond a timeout of its own (1 ms), never 0 nor the default', () => {
    expect(backupHooksFor(pod({ 'pre.hook.backup.velero.io/command': 'sync', 'pre.hook.backup.velero.io/timeout': '500us' }), 'pre', {})).toMatchObject([{ timeoutMs: 1 }]);
    expect(backupHooksFor(pod({ 'pre.hook.backup.velero.io/command': 'sync', 'pre.hook.backup.velero.io/timeout': '1.5ms' }), 'pre', {})).toMatchObject([{ timeoutMs: 2 }]);
    expect(backupHooksFor(pod({ 'pre.hook.backup.velero.io/command': 'sync', 'pre.hook.backup.velero.io/timeout': '0s' }), 'pre', {})).toMatchObject([{ timeoutMs: 30_000 }]);
  });

  it('names a spec hook timeout that is not a duration in the hook problem, as it does for annotations', () => {
    const spec = { hooks: { resources: [{ name: 'h', pre: [{ exec: { command: ['sync'], timeout: 'soon' } }] }] } };
    expect(backupHooksFor(pod(), 'pre', spec)).toMatchObject([{ timeoutMs: 30_000, problem: 'spec.hooks.resources[0].pre[0].exec.timeout: "soon" is not a duration such as 30s or 5m' }]);
  });

  it('reads the legacy un-prefixed annotations as pre hooks', () => {
    const p = pod({ 'hook.backup.velero.io/command': 'sync' });
    expect(backupHooksFor(p, 'pre', {})).toMatchObject([{ command: ['sync'], container: 'db', onError: 'Fail', timeoutMs: 30_000 }]);
    expect(backupHooksFor(p, 'post', {})).toEqual([]);
  });

  it('takes a command that is not a JSON array as one argument, as Velero does', () => {
    expect(commandFromAnnotation('echo hello')).toEqual(['echo hello']);
    expect(commandFromAnnotation('["a","b"]')).toEqual(['a', 'b']);
    expect(commandFromAnnotation('[not json')).toEqual(['[not json']);
  });

  it.each([
    [{ 'post.hook.backup.velero.io/command': 'x', 'post.hook.backup.velero.io/container': 'nope' }, 'annotation post.hook.backup.velero.io/container: container "nope" does not exist in pod shop/db-0 (it has db, sidecar)'],
    [{ 'post.hook.backup.velero.io/command': 'x', 'post.hook.backup.velero.io/timeout': 'soon' }, 'annotation post.hook.backup.velero.io/timeout: "soon" is not a duration such as 30s or 5m'],
    [{ 'post.hook.backup.velero.io/command': 'x', 'post.hook.backup.velero.io/on-error': 'Ignore' }, 'annotation post.hook.backup.velero.io/on-error: "Ignore" is neither Continue nor Fail'],
  ])('a bad annotation makes the hook fail, naming the annotation (%j)', (annotations, problem) => {
    expect(backupHooksFor(pod(annotations), 'post', {})[0]?.problem).toBe(problem);
  });

  it('a spec hook naming a missing container fails, naming the field', () => {
    const spec: BackupSpec = { hooks: { resources: [{ name: 'h', pre: [{ exec: { container: 'ghost', command: ['x'] } }] }] } };
    expect(backupHooksFor(pod(), 'pre', spec)[0]?.problem).toBe('spec.hooks.resources[0].pre[0].exec.container: container "ghost" does not exist in pod shop/db-0 (it has db, sidecar)');
  });

  it('finds the problems of spec.hooks at validation', () => {
    const spec: BackupSpec = { hooks: { resources: [{ name: 'h', includedNamespaces: ['*', 'a'], labelSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } }] } };
    expect(backupHookSpecProblems(spec)).toEqual([
      "spec.hooks.resources[0] (h): invalid included/excluded namespace lists: includes list must either contain '*' only, or a non-empty list of items",
      'spec.hooks.resources[0] (h): invalid label selector: "Near" is not a valid label selector operator',
    ]);
  });
});

describe('running hooks', () => {
  const log = createLogger({ level: 'fatal' });
  const ok = (stdout = ''): ExecResult => ({ exitCode: 0, stdout, stderr: '', truncatedBytes: 0 });

  function fakeExec(results: Record<string, ExecResult | Error>) {
    const calls: ExecRequest[] = [];
    const exec = async (req: ExecRequest): Promise<ExecResult> => {
      calls.push(req);
      const r = results[req.command.join(' ')] ?? ok();
      if (r instanceof Error) throw r;
      return r;
    };
    return { exec, calls };
  }

  it('runs each hook in its container with its timeout, and counts them', async () => {
    const { exec, calls } = fakeExec({});
    const outcome = await runExecHooks({ pod: pod(), phase: 'pre', hooks: backupHooksFor(pod(), 'pre', hooksSpec), exec, log });
    expect(outcome).toEqual({ attempted: 2, failed: 0, errors: [], failedHard: false, notRun: [] });
    expect(calls).toEqual([
      { namespace: 'shop', pod: 'db-0', container: 'db', command: ['fsfreeze', '-f', '/data'], timeoutMs: 60_000 },
      { namespace: 'shop', pod: 'db-0', container: 'sidecar', command: ['sync'], timeoutMs: 30_000 },
    ]);
  });

  it('a failing Continue hook is counted and reported, and the next one runs', async () => {
    const { exec, calls } = fakeExec({ sync: { exitCode: 2, stdout: '', stderr: 'oops', truncatedBytes: 0 } });
    const hooks = [...backupHooksFor(pod(), 'pre', hooksSpec)].reverse();
    const outcome = await runExecHooks({ pod: pod(), phase: 'pre', hooks, exec, log });
    expect(outcome).toEqual({ attempted: 2, failed: 1, errors: ['pre hook freeze in container sidecar of pod shop/db-0 failed: command terminated with exit code 2'], failedHard: false, notRun: [] });
    expect(calls).toHaveLength(2);
  });

  it('a failing Fail hook stops the rest (they still count as attempted)', async () => {
    const { exec, calls } = fakeExec({ 'fsfreeze -f /data': new ExecError('timed out after 60s') });
    const outcome = await runExecHooks({ pod: pod(), phase: 'pre', hooks: backupHooksFor(pod(), 'pre', hooksSpec), exec, log });
    expect(outcome).toMatchObject({ attempted: 2, failed: 1, errors: ['pre hook freeze in container db of pod shop/db-0 failed: timed out after 60s'], failedHard: true, notRun: [{ command: ['sync'] }] });
    expect(calls).toHaveLength(1);
  });

  it('a hook with a problem fails without being run', async () => {
    const { exec, calls } = fakeExec({});
    const p = pod({ 'post.hook.backup.velero.io/command': 'x', 'post.hook.backup.velero.io/timeout': 'soon', 'post.hook.backup.velero.io/on-error': 'Continue' });
    const outcome = await runExecHooks({ pod: p, phase: 'post', hooks: backupHooksFor(p, 'post', {}), exec, log });
    expect(outcome.failed).toBe(1);
    expect(outcome.errors[0]).toContain('post.hook.backup.velero.io/timeout');
    expect(calls).toEqual([]);
  });

  it('runs nothing in a pod that has ended', async () => {
    const { exec, calls } = fakeExec({});
    const ended = { ...pod(), status: { phase: 'Succeeded' } };
    expect(await runExecHooks({ pod: ended, phase: 'pre', hooks: backupHooksFor(ended, 'pre', hooksSpec), exec, log })).toMatchObject({ attempted: 2, failed: 0 });
    expect(calls).toEqual([]);
  });
});

describe('when waiting post hooks may run', () => {
  const entry: PendingPostHooks = { namespace: 'shop', pod: 'db-0', uid: 'u', claims: ['data'], hooks: [] };
  const pvb = (phase: string, podName = 'db-0') => ({ metadata: { name: `p-${podName}-${phase}` }, spec: { pod: { namespace: 'shop', name: podName }, volume: 'v' }, status: { phase } }) as unknown as PodVolumeBackup;
  const du = (phase: string, pvc = 'data') => ({ metadata: { name: `d-${pvc}-${phase}` }, spec: { sourceNamespace: 'shop', sourcePVC: pvc }, status: { phase } }) as unknown as DataUpload;
  const never = () => false;

  it('waits for every PodVolumeBackup of the pod to end', () => {
    expect(postHooksReady(entry, [pvb('InProgress'), pvb('Completed')], [], never)).toEqual({ ready: false, waitingFor: ['PodVolumeBackup p-db-0-InProgress'] });
    expect(postHooksReady(entry, [pvb('Failed'), pvb('Completed'), pvb('InProgress', 'other')], [], never).ready).toBe(true);
  });

  it("waits for the snapshot of each of the pod's DataUploads, not for the data to move", () => {
    expect(postHooksReady(entry, [], [du('New')], never).ready).toBe(false);
    expect(postHooksReady(entry, [], [du('New')], () => true).ready).toBe(true);
    expect(postHooksReady(entry, [], [du('Prepared')], never).ready).toBe(true);
    expect(postHooksReady(entry, [], [du('Accepted', 'other-claim')], never).ready).toBe(true);
  });
});
