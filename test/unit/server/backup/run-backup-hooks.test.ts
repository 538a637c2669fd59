import { describe, expect, it } from 'vitest';
import type { BackupSpec, PodVolumeBackup } from '../../../../src/api/index.js';
import type { ExecRequest, ExecResult } from '../../../../src/kube/pod-exec.js';
import { runBackup } from '../../../../src/server/backup/run-backup.js';
import { podVolumeBackupFor } from '../../../../src/server/podvolume/backup-pvb.js';
import type { PendingPostHooks } from '../../../../src/server/hooks/pending-post-hooks.js';
import type { BackupStore } from '../../../../src/storage/backup-store.js';
import { fakePodVolumes, podVolumesOutcome, runBackupFixture } from './run-backup-fixture.js';
import { readTarGz } from './tar.js';

const FREEZE = { 'pre.hook.backup.velero.io/command': '["fsfreeze","-f","/data"]', 'post.hook.backup.velero.io/command': '["fsfreeze","-u","/data"]' };

interface PodDef {
  name: string;
  annotations?: Record<string, string>;
  /** Gets a PodVolumeBackup for its volume "data". */
  fsBackup?: boolean;
}

function setup(pods: PodDef[], spec: BackupSpec = {}, fail: Record<string, number> = {}) {
  const { fs, backup, api, log, options, gz } = runBackupFixture({ tempPrefix: 'cairn-run-backup-hooks-', spec });
  for (const p of pods) {
    api.add('pods', {
      name: p.name,
      namespace: 'app',
      ...(p.annotations ? { annotations: p.annotations } : {}),
      spec: { nodeName: 'n1', containers: [{ name: 'db' }], volumes: [{ name: 'data', emptyDir: {} }] },
      status: { phase: 'Running' },
    });
  }
  const events: string[] = [];
  const creator = fakePodVolumes((pod) => {
    if (!pods.find((p) => p.name === pod.metadata.name)?.fsBackup) return podVolumesOutcome();
    events.push(`pvb ${pod.metadata.name}`);
    const pvb = { ...podVolumeBackupFor({ backup, pod, volume: 'data' }), metadata: { name: `b1-${pod.metadata.name}`, namespace: 'velero' } } as PodVolumeBackup;
    return podVolumesOutcome({ pvbs: [pvb] });
  });
  const exec = async (req: ExecRequest): Promise<ExecResult> => {
    events.push(`exec ${req.pod} ${req.command.join(' ')}`);
    const code = fail[`${req.pod} ${req.command.join(' ')}`] ?? 0;
    return { exitCode: code, stdout: `out of ${req.command.join(' ')}`, stderr: '', truncatedBytes: 0 };
  };
  const recorded: PendingPostHooks[][] = [];
  const opts = {
    ...options,
    podVolumes: creator,
    exec,
    onPendingPostHooks: async (p: readonly PendingPostHooks[]) => void recorded.push([...p]),
    onFinalizing: async (s: { phase: string }) => ({ ...backup, status: { phase: s.phase as 'Finalizing' } }),
  };
  const archivedPods = async () => {
    const names = (await readTarGz(await fs.get('backups/b1/b1.tar.gz'))).map((e) => e.name);
    return [...new Set(names.filter((k) => k.startsWith('resources/pods/namespaces/app/')).map((k) => k.split('/').pop()?.replace('.json', '')))].sort();
  };
  return { opts, events, recorded, gz, archivedPods, logText: log.text };
}

describe('backup hooks in a backup run', () => {
  it("runs a pod's pre hook before its PodVolumeBackups are created and puts its post hook off until they end", async () => {
    const { opts, events, recorded } = setup([{ name: 'db-0', annotations: FREEZE, fsBackup: true }]);
    const outcome = await runBackup(opts);
    expect(events).toEqual(['exec db-0 fsfreeze -f /data', 'pvb db-0']);
    expect(outcome).toMatchObject({ phase: 'WaitingForPluginOperations', hooks: { attempted: 1, failed: 0 } });
    expect(recorded.at(-1)).toEqual([
      { namespace: 'app', pod: 'db-0', uid: 'uid-pods-app-db-0', claims: [], hooks: [{ name: '<from-annotation>', source: 'annotation', index: 0, container: 'db', command: ['fsfreeze', '-u', '/data'], onError: 'Fail', timeoutMs: 30_000 }] },
    ]);
  });

  it('runs the post hook right after the pod when it has no volumes to wait for, and logs the output', async () => {
    const { opts, events, recorded, logText } = setup([{ name: 'web-0', annotations: FREEZE }]);
    const outcome = await runBackup(opts);
    expect(events).toEqual(['exec web-0 fsfreeze -f /data', 'exec web-0 fsfreeze -u /data']);
    expect(outcome).toMatchObject({ phase: 'Completed', hooks: { attempted: 2, failed: 0 } });
    expect(recorded).toEqual([]);
    expect(logText()).toContain('stdout: out of fsfreeze -f /data');
  });

  it('a failed Fail pre hook leaves the pod out of the backup, which ends PartiallyFailed with the error in the results', async () => {
    const { opts, events, gz, archivedPods } = setup([{ name: 'db-0', annotations: FREEZE, fsBackup: true }, { name: 'web-0' }], {}, { 'db-0 fsfreeze -f /data': 1 });
    const outcome = await runBackup(opts);
    expect(events).toEqual(['exec db-0 fsfreeze -f /data']);
    expect(outcome).toMatchObject({ phase: 'PartiallyFailed', errors: 2, hooks: { attempted: 1, failed: 1 } });
    expect(await archivedPods()).toEqual(['web-0']);
    expect(await gz('b1-results.gz')).toEqual({
      warnings: {},
      errors: {
        namespaces: {
          app: ['pre hook <from-annotation> in container db of pod app/db-0 failed: command terminated with exit code 1', 'Error running pre hooks for pod app/db-0: the pod is not backed up'],
        },
      },
    });
  });

  it('a failed Continue hook keeps the pod in the backup but still makes it PartiallyFailed (Velero logs it as an error)', async () => {
    const spec: BackupSpec = { hooks: { resources: [{ name: 'flush', pre: [{ exec: { command: ['sync'], onError: 'Continue' } }, { exec: { command: ['echo', 'next'] } }] }] } };
    const { opts, events, archivedPods } = setup([{ name: 'web-0' }], spec, { 'web-0 sync': 3 });
    const outcome = await runBackup(opts);
    expect(events).toEqual(['exec web-0 sync', 'exec web-0 echo next']);
    expect(outcome).toMatchObject({ phase: 'PartiallyFailed', errors: 1, hooks: { attempted: 2, failed: 1 } });
    expect(await archivedPods()).toEqual(['web-0']);
  });

  it('a hook naming a container the pod lacks is a hook error naming the field; nothing is run', async () => {
    const spec: BackupSpec = { hooks: { resources: [{ name: 'h', pre: [{ exec: { container: 'ghost', command: ['sync'], onError: 'Continue' } }] }] } };
    const { opts, events, gz } = setup([{ name: 'web-0' }], spec);
    const outcome = await runBackup(opts);
    expect(events).toEqual([]);
    expect(outcome).toMatchObject({ phase: 'PartiallyFailed', hooks: { attempted: 1, failed: 1 } });
    expect(JSON.stringify(await gz('b1-results.gz'))).toContain('spec.hooks.resources[0].pre[0].exec.container: container \\"ghost\\" does not exist in pod app/web-0');
  });

  it('runs the post hooks it put off when the run fails, so no pod is left frozen', async () => {
    const { opts, events, recorded } = setup([{ name: 'db-0', annotations: FREEZE, fsBackup: true }]);
    const failing = { ...opts, store: { ...opts.store, description: 'broken', putBackup: () => Promise.reject(new Error('disk full')) } as unknown as BackupStore };
    await expect(runBackup(failing)).rejects.toThrow(/disk full/);
    expect(events).toEqual(['exec db-0 fsfreeze -f /data', 'pvb db-0', 'exec db-0 fsfreeze -u /data']);
    expect(recorded.at(-1)).toEqual([]);
  });

  it('first runs the post hooks an earlier, interrupted run left waiting', async () => {
    const { opts, events } = setup([]);
    const leftover: PendingPostHooks = { namespace: 'app', pod: 'db-0', uid: 'u', claims: [], hooks: [{ name: 'x', source: 'spec', index: 0, container: 'db', command: ['fsfreeze', '-u', '/data'], onError: 'Fail', timeoutMs: 30_000 }] };
    const outcome = await runBackup({ ...opts, leftoverPostHooks: [leftover] });
    expect(events).toEqual(['exec db-0 fsfreeze -u /data']);
    expect(outcome.hooks).toEqual({ attempted: 1, failed: 0 });
  });
});
