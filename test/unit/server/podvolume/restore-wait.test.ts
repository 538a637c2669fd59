import { describe, expect, it } from 'vitest';
import { newRestore, type PodVolumeRestore } from '../../../../src/api/index.js';
import { newPodVolumeRestoreFor } from '../../../../src/server/podvolume/restore-pvr.js';
import { podVolumeRestoreOperations } from '../../../../src/server/podvolume/restore-operations.js';
import { GAVE_UP_ANNOTATION, judgePodVolumeRestore, type JudgeOptions } from '../../../../src/server/podvolume/restore-wait.js';
import { resultsFrom } from '../../../../src/server/restore/restore-finalize.js';
import { pvPatchFor } from '../../../../src/server/restore/restore-pv-patch.js';
import { restoreVolumeInfoForPodVolumeRestore } from '../../../../src/api/volume-info.js';

const CREATED = '2026-01-01T00:00:00Z';
const at = (seconds: number) => new Date(Date.parse(CREATED) + seconds * 1000);

/** PVR r1-abc of the volume data of pod app/web-0, made as restore r1 makes it, created at CREATED. */
function pvr(status?: PodVolumeRestore['status'], annotations?: Record<string, string>): PodVolumeRestore {
  const p = newPodVolumeRestoreFor({
    namespace: 'cairn',
    restore: newRestore({ namespace: 'cairn', name: 'r1', spec: { backupName: 'b1' } }),
    pod: { name: 'web-0', namespace: 'app', uid: 'pod-uid' },
    volume: { volume: 'data', snapshotID: 'snap-1', uploaderType: 'kopia' },
    backupStorageLocation: 'default',
    sourceNamespace: 'app',
  });
  p.metadata = { ...p.metadata, name: 'r1-abc', ...(annotations ? { annotations } : {}) };
  (p.metadata as { creationTimestamp?: string }).creationTimestamp = CREATED;
  if (status) p.status = status;
  return p;
}

function judge(o: Partial<JudgeOptions> & { pvr: PodVolumeRestore }) {
  return judgePodVolumeRestore({
    now: at(1),
    pod: { spec: { nodeName: 'n1' } },
    nodeAgentRunningOn: (n) => n === 'n1',
    nodeAgentWaitMs: 600_000,
    operationTimeoutMs: 4 * 3600_000,
    ...o,
  });
}

describe('waiting for a PodVolumeRestore', () => {
  it('Completed, Failed and Canceled end the wait with Velero’s error wording', () => {
    expect(judge({ pvr: pvr({ phase: 'Completed' }) })).toEqual({ state: 'completed' });
    expect(judge({ pvr: pvr({ phase: 'Failed', message: 'data path restore failed: disk full' }) })).toEqual({
      state: 'failed',
      error: 'pod volume restore failed: data path restore failed: disk full',
    });
    expect(judge({ pvr: pvr({ phase: 'Canceled', message: 'canceled by user' }) })).toEqual({ state: 'failed', error: 'pod volume restore canceled: canceled by user' });
  });

  it('keeps waiting while the node agent works on it', () => {
    for (const phase of ['Accepted', 'Prepared', 'InProgress', 'Canceling'] as const) {
      expect(judge({ pvr: pvr({ phase }), pod: undefined, nodeAgentRunningOn: () => false, now: at(3600) })).toMatchObject({ state: 'waiting' });
    }
    expect(judge({ pvr: pvr() })).toMatchObject({ state: 'waiting' });
  });

  it('no node agent on the pod’s node: waits a bounded time, then gives up with the node named', () => {
    const none = { nodeAgentRunningOn: () => false };
    expect(judge({ pvr: pvr(), ...none, now: at(599) })).toMatchObject({ state: 'waiting' });
    expect(judge({ pvr: pvr(), ...none, now: at(601) })).toEqual({ state: 'give-up', error: 'node-agent pod is not running in node n1' });
  });

  it('a pod that is never scheduled, or is gone, is given up on after the bounded wait', () => {
    expect(judge({ pvr: pvr(), pod: { spec: {} }, now: at(30) })).toMatchObject({ state: 'waiting' });
    const unscheduled = judge({ pvr: pvr(), pod: { spec: {} }, now: at(601) });
    expect(unscheduled.state).toBe('give-up');
    expect(unscheduled).toMatchObject({ error: expect.stringContaining('the restored pod was not scheduled within 10m0s') as unknown });
    expect(judge({ pvr: pvr(), pod: undefined, now: at(601) })).toMatchObject({ state: 'give-up', error: expect.stringContaining('does not exist') as unknown });
  });

  it('itemOperationTimeout bounds the whole wait, whatever the phase', () => {
    const v = judge({ pvr: pvr({ phase: 'InProgress' }), now: at(4 * 3600 + 1) });
    expect(v).toMatchObject({ state: 'give-up', error: expect.stringContaining('timed out after 4h0m0s waiting for pod volume restore r1-abc') as unknown });
  });

  it('a PVR the server gave up on stays failed with the recorded error (a restart decides nothing twice)', () => {
    expect(judge({ pvr: pvr({ phase: 'Canceled' }, { [GAVE_UP_ANNOTATION]: 'node-agent pod is not running in node n2' }) })).toEqual({
      state: 'failed',
      error: 'node-agent pod is not running in node n2',
    });
  });
});

describe('PVRs as restore item operations and restore volume info', () => {
  const restore = newRestore({ namespace: 'cairn', name: 'r1', spec: { backupName: 'b1' } });
  restore.metadata.uid = 'ru';

  it('one operation per PVR on its pod, phase and error from the PVR', () => {
    const ops = podVolumeRestoreOperations(restore, [
      pvr({ phase: 'Completed', progress: { totalBytes: 10, bytesDone: 10 }, startTimestamp: '2026-01-01T00:00:05Z', completionTimestamp: '2026-01-01T00:00:09Z' }),
      pvr({ phase: 'Failed', message: 'boom' }),
      pvr({ phase: 'InProgress' }),
      pvr(),
    ]);
    expect(ops[0]).toEqual({
      spec: {
        restoreName: 'r1',
        restoreUID: 'ru',
        restoreItemAction: 'velero.io/pod-volume-restore',
        resourceIdentifier: { Group: '', Resource: 'pods', Namespace: 'app', Name: 'web-0' },
        operationID: 'pvr-r1-abc',
      },
      status: { phase: 'Completed', nCompleted: 10, nTotal: 10, operationUnits: 'Bytes', description: 'volume data', created: CREATED, started: '2026-01-01T00:00:05Z', updated: '2026-01-01T00:00:09Z' },
    });
    expect(ops.map((o) => [o.status.phase, o.status.error])).toEqual([
      ['Completed', undefined],
      ['Failed', 'pod volume restore failed: boom'],
      ['InProgress', undefined],
      ['New', undefined],
    ]);
  });

  it('RestoreVolumeInfo per PVR: method PodVolumeRestore, pvrInfo, claim when it is a PVC volume, Velero key order', () => {
    const info = restoreVolumeInfoForPodVolumeRestore(pvr({ phase: 'Completed', progress: { totalBytes: 2048, bytesDone: 2048 } }), 'data-claim');
    expect(JSON.stringify(info)).toBe(
      JSON.stringify({
        pvcName: 'data-claim',
        pvcNamespace: 'app',
        restoreMethod: 'PodVolumeRestore',
        snapshotDataMoved: false,
        pvrInfo: { snapshotHandle: 'snap-1', size: 2048, uploaderType: 'kopia', volumeName: 'data', podName: 'web-0', podNamespace: 'app', Phase: '' },
      }),
    );
    const emptyDir = restoreVolumeInfoForPodVolumeRestore(pvr({ phase: 'Completed' }));
    expect(emptyDir).toEqual({
      restoreMethod: 'PodVolumeRestore',
      snapshotDataMoved: false,
      pvrInfo: { snapshotHandle: 'snap-1', uploaderType: 'kopia', volumeName: 'data', podName: 'web-0', podNamespace: 'app', Phase: '' },
    });
  });
});

describe('PVs provisioned anew for fs-backup claims get the backed-up reclaim policy and labels', () => {
  it('patches only what differs', () => {
    expect(pvPatchFor({ reclaimPolicy: 'Delete', labels: { a: '1' } }, { reclaimPolicy: 'Retain', labels: { a: '1', tier: 'db' } })).toEqual({
      spec: { persistentVolumeReclaimPolicy: 'Retain' },
      metadata: { labels: { tier: 'db' } },
    });
    expect(pvPatchFor({ reclaimPolicy: 'Retain', labels: { a: '1' } }, { reclaimPolicy: 'Retain', labels: null })).toBeUndefined();
    expect(pvPatchFor({ reclaimPolicy: 'Delete' }, { reclaimPolicy: '', labels: { a: '1' } })).toEqual({ metadata: { labels: { a: '1' } } });
  });
});

describe('finishing the results of a restore that waited for its pod volumes', () => {
  it('reads a stored results file back so errors can be added', () => {
    const stored = { warnings: { velero: ['w1'], namespaces: { app: ['w2'] } }, errors: { cluster: ['e1'] } };
    const results = resultsFrom(stored);
    results.error({ kind: 'velero' }, 'pod volume restore failed: boom');
    expect(results.toJSON()).toEqual({
      warnings: { velero: ['w1'], namespaces: { app: ['w2'] } },
      errors: { cluster: ['e1'], velero: ['pod volume restore failed: boom'] },
    });
    expect(resultsFrom(undefined).toJSON()).toEqual({ warnings: {}, errors: {} });
  });
});
