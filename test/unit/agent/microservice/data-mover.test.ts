import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/base/logger.js';
import { dataUploadRealSource, dataUploadTags } from '../../../../src/agent/microservice/data-mover.js';
import { findParentSnapshot, parallelFilesDownloadSetting } from '../../../../src/agent/microservice/pod-volume.js';
import { backupResultMessage, messages, restoreResultMessage } from '../../../../src/agent/microservice/protocol.js';
import { runDataPath } from '../../../../src/agent/microservice/run.js';
import { runWatchedTask } from '../../../../src/agent/microservice/task.js';
import type { TaskWatch, DataPathResource } from '../../../../src/agent/microservice/watch.js';
import type { DataUpload } from '../../../../src/api/index.js';
import type { SnapshotStore } from '../../../../src/datapath/snapshots.js';
import type { Kube } from '../../../../src/kube/client.js';

const logger = createLogger({ level: 'fatal' });

const du = (labels: Record<string, string> = {}) =>
  ({ metadata: { name: 'b1-abcde', labels }, spec: { sourceNamespace: 'app', sourcePVC: 'data-web-0', backupStorageLocation: 'default', snapshotType: 'CSI', operationTimeout: '10m' } }) as unknown as DataUpload;

describe('data mover messages (Velero\'s wording for DataUpload/DataDownload)', () => {
  it('names the kind "data upload"/"data download" in Events and DataUpload/DataDownload in termination messages', () => {
    expect(messages.failed('DU', 'du-1', 'boom')).toBe('Data path for data upload du-1 failed, error boom');
    expect(messages.canceled('DD', 'dd-1')).toBe('Data path for data download dd-1 canceled');
    expect(messages.canceling('DU', 'du-1')).toBe('Canceling for data upload du-1');
    expect(messages.runFailed('DU', 'du-1', 'data path is canceled')).toBe('Failed to run data path service for DataUpload du-1: data path is canceled');
    expect(messages.initFailed('DD', 'dd-1', 'x')).toBe('Failed to init data path service for DataDownload dd-1: x');
    // fs-backup wording is unchanged
    expect(messages.failed('PVB', 'p', 'e')).toBe('Data path for PVB p failed, error e');
    expect(messages.runFailed('PVR', 'p', 'e')).toBe('Failed to run data path service for PVR p: e');
  });

  it('the result JSON carries the volume mode', () => {
    expect(JSON.parse(backupResultMessage({ snapshotID: 's', emptySnapshot: false, volumePath: '/dev/x', totalBytes: 9, volumeMode: 'Block' }))).toEqual({
      snapshotID: 's',
      emptySnapshot: false,
      source: { byPath: '/dev/x', volumeMode: 'Block' },
      totalBytes: 9,
    });
    expect(JSON.parse(restoreResultMessage({ volumePath: '/dev/y', totalBytes: 9, volumeMode: 'Block' }))).toEqual({ target: { byPath: '/dev/y', volumeMode: 'Block' }, totalBytes: 9 });
  });

  it('a canceled DataUpload reports Canceling, Canceled, Stopped and a termination message ending in "data path is canceled"', async () => {
    const events: string[] = [];
    let cancel: (() => void) | undefined;
    const out = await runDataPath({
      kind: 'DU',
      name: 'du-1',
      logger,
      events: { emit: async (reason, message) => void events.push(`${reason}: ${message}`) },
      waitUntilInProgress: async () => undefined,
      onCancelRequested: (l) => ((cancel = l), () => (cancel = undefined)),
      prepare: async () => ({
        run: ({ signal }) =>
          new Promise<string>((_resolve, reject) => {
            signal.addEventListener('abort', () => reject(new Error('cancelled')));
            cancel?.();
          }),
      }),
      progressIntervalMs: 0,
    });
    expect(out).toEqual({ outcome: 'canceled', terminationMessage: 'Failed to run data path service for DataUpload du-1: data path is canceled' });
    expect(events).toEqual([
      'Data-Path-Started: Data path for du-1 started',
      'Data-Path-Canceling: Canceling for data upload du-1',
      'Data-Path-Canceled: Data path for data upload du-1 canceled',
      'Data-Path-Stopped: Data path for du-1 stopped',
    ]);
  });
});

describe('data upload snapshots', () => {
  it('the real source is <sourceNamespace>/<sourcePVC>; tags carry the operation ID, requester and volume mode', () => {
    expect(dataUploadRealSource(du())).toBe('app/data-web-0');
    expect(dataUploadTags(du({ 'velero.io/async-operation-id': 'du-123', 'velero.io/backup-name': 'b1' }), 'Block')).toEqual({
      'velero.io/async-operation-id': 'du-123',
      backup: 'b1',
      'snapshot-requester': 'snapshot-data-upload-download',
      'snapshot-uploader': 'kopia',
      'snapshot-real-source': 'app/data-web-0',
      'volume-mode': 'Block',
    });
  });

  it('a DataDownload\'s dataMoverConfig ParallelFilesDownload sets the files restored at once, as a PVR\'s uploaderSettings', () => {
    expect(parallelFilesDownloadSetting({ ParallelFilesDownload: '4', WriteSparseFiles: 'true' })).toEqual({ concurrency: 4 });
    expect(parallelFilesDownloadSetting({ ParallelFilesDownload: '-1' })).toEqual({});
    expect(parallelFilesDownloadSetting(undefined)).toEqual({});
  });

  it('the parent is the latest snapshot of the same source and volume mode', async () => {
    const snap = (id: string, time: string, tags: Record<string, string>) => ({ id, time, tags });
    const snapshots = {
      list: async () => [
        snap('a', '2026-01-01T00:00:00Z', { 'snapshot-real-source': 'app/data-web-0', 'volume-mode': 'Filesystem' }),
        snap('b', '2026-01-02T00:00:00Z', { 'snapshot-real-source': 'app/data-web-0', 'volume-mode': 'Block' }),
        snap('c', '2026-01-03T00:00:00Z', { 'snapshot-real-source': 'app/other', 'volume-mode': 'Filesystem' }),
      ],
    } as unknown as SnapshotStore;
    expect(await findParentSnapshot(snapshots, 'app/data-web-0', { 'volume-mode': 'Filesystem' })).toBe('a');
    expect(await findParentSnapshot(snapshots, 'app/data-web-0', { 'volume-mode': 'Block' })).toBe('b');
    expect(await findParentSnapshot(snapshots, 'app/data-web-0')).toBe('b');
    expect(await findParentSnapshot(snapshots, 'app/none')).toBeUndefined();
  });
});

describe('runWatchedTask (shared by pod-volume and data-mover)', () => {
  it('records the Events on the watched object and stops the watch at the end, also after an init failure', async () => {
    const obj: DataPathResource = { apiVersion: 'velero.io/v2alpha1', kind: 'DataDownload', metadata: { name: 'dd-1', namespace: 'velero', uid: 'u1' }, spec: {}, status: { phase: 'InProgress' } };
    let stopped = false;
    const watch: TaskWatch<DataPathResource> = {
      start: async () => undefined,
      stop: async () => void (stopped = true),
      current: () => obj,
      waitUntilInProgress: async () => obj,
      onCancelRequested: () => () => undefined,
    };
    const created: { reason?: string; message?: string; involvedObject: { kind?: string; name?: string } }[] = [];
    const kube = {
      core: {
        createNamespacedEvent: async ({ body }: { body: (typeof created)[number] }) => (created.push(body), body),
        replaceNamespacedEvent: async ({ body }: { body: (typeof created)[number] }) => body,
      },
    } as unknown as Kube;
    const out = await runWatchedTask({ kube, namespace: 'velero', name: 'dd-1', volumePath: '/nowhere', resourceTimeoutMs: 1000, logger }, 'DD', watch, async () => {
      throw new Error('no repository here');
    });
    expect(out).toEqual({ outcome: 'failed', terminationMessage: 'Failed to init data path service for DataDownload dd-1: no repository here' });
    expect(created.map((e) => [e.reason, e.message, e.involvedObject.kind, e.involvedObject.name])).toEqual([
      ['Data-Path-Failed', 'Data path for data download dd-1 failed, error no repository here', 'DataDownload', 'dd-1'],
      ['Data-Path-Stopped', 'Data path for dd-1 stopped', 'DataDownload', 'dd-1'],
    ]);
    expect(stopped).toBe(true);
  });
});
