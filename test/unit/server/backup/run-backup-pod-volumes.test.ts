import { describe, expect, it } from 'vitest';
import { newBackup, type PodVolumeBackup } from '../../../../src/api/index.js';
import { runBackup } from '../../../../src/server/backup/run-backup.js';
import type { PodVolumeBackupCreator } from '../../../../src/server/podvolume/backup-creator.js';
import { podVolumeBackupFor } from '../../../../src/server/podvolume/backup-pvb.js';
import { volumeInfoFor } from '../../../../src/server/podvolume/backup-tracking.js';
import { fakePodVolumes, podVolumesOutcome, runBackupFixture } from './run-backup-fixture.js';

/** Stands in for the creator: one PVB per pod for its volume "cache", and a pod whose node has no node agent. */
function fakeCreator(backup: ReturnType<typeof newBackup>): { creator: PodVolumeBackupCreator; seen: string[] } {
  const seen: string[] = [];
  const creator = fakePodVolumes((pod) => {
    seen.push(pod.metadata.name);
    if (pod.metadata.name === 'orphan') {
      return podVolumesOutcome({ skipped: [{ volume: 'cache', reason: 'Skip pod volume cache: daemonset pod not found in running state in node n9', quiet: false }], errors: ['daemonset pod not found in running state in node n9'] });
    }
    const pvb = { ...podVolumeBackupFor({ backup, pod, volume: 'cache' }), metadata: { name: `b1-${pod.metadata.name}`, namespace: 'velero' } } as PodVolumeBackup;
    return podVolumesOutcome({ pvbs: [pvb], volumeInfo: [volumeInfoFor(pvb)] });
  });
  return { creator, seen };
}

function setup(pods: string[]) {
  const { backup, api, options, gz } = runBackupFixture({ tempPrefix: 'cairn-run-backup-pv-' });
  for (const name of pods) api.add('pods', { name, namespace: 'app', spec: { nodeName: 'n1', volumes: [{ name: 'cache', emptyDir: {} }] }, status: { phase: 'Running' } });
  const phases: { phase: string; itemOperations: number }[] = [];
  const { creator, seen } = fakeCreator(backup);
  const opts = {
    ...options,
    podVolumes: creator,
    onFinalizing: async (s: { phase: string; itemOperations: number }) => {
      phases.push({ phase: s.phase, itemOperations: s.itemOperations });
      return { ...backup, status: { phase: s.phase as 'Finalizing', backupItemOperationsAttempted: s.itemOperations } };
    },
  };
  return { opts, phases, seen, gz };
}

describe('runBackup with fs-backup volumes', () => {
  it('stores the items and waits for the PodVolumeBackups instead of completing', async () => {
    const { opts, phases, seen, gz } = setup(['web-0', 'web-1']);
    const outcome = await runBackup(opts);
    expect(seen).toEqual(['web-0', 'web-1']);
    expect(outcome).toMatchObject({ phase: 'WaitingForPluginOperations', itemOperations: 2, errors: 0 });
    expect(phases).toEqual([{ phase: 'WaitingForPluginOperations', itemOperations: 2 }]);
    expect(((await gz('b1-podvolumebackups.json.gz')) as PodVolumeBackup[]).map((p) => p.metadata.name)).toEqual(['b1-web-0', 'b1-web-1']);
    const ops = (await gz('b1-itemoperations.json.gz')) as { spec: { operationID: string }; status: { phase: string } }[];
    expect(ops.map((o) => [o.spec.operationID, o.status.phase])).toEqual([
      ['pvb-b1-web-0', 'New'],
      ['pvb-b1-web-1', 'New'],
    ]);
    const info = (await gz('b1-volumeinfo.json.gz')) as { backupMethod?: string; pvbInfo?: { podName: string } }[];
    expect(info.map((e) => [e.backupMethod, e.pvbInfo?.podName])).toEqual([
      ['PodVolumeBackup', 'web-0'],
      ['PodVolumeBackup', 'web-1'],
    ]);
  });

  it('a pod whose volumes cannot be backed up is an error; with PVBs as well the backup waits partially failed', async () => {
    const { opts, gz } = setup(['orphan', 'web-0']);
    const outcome = await runBackup(opts);
    expect(outcome).toMatchObject({ phase: 'WaitingForPluginOperationsPartiallyFailed', itemOperations: 1, errors: 1, warnings: 1 });
    expect(await gz('b1-results.gz')).toEqual({
      warnings: { namespaces: { app: ['Skip pod volume cache: daemonset pod not found in running state in node n9'] } },
      errors: { namespaces: { app: ['daemonset pod not found in running state in node n9'] } },
    });
  });

  it('without any PVB the backup finishes as before', async () => {
    const { opts, phases } = setup([]);
    const outcome = await runBackup(opts);
    expect(outcome).toMatchObject({ phase: 'Completed', itemOperations: 0 });
    expect(phases).toEqual([{ phase: 'Finalizing', itemOperations: 0 }]);
  });
});
