import { describe, expect, it } from 'vitest';
import {
  BackupPhase,
  DefaultNamespace,
  Labels,
  controllerReference,
  creationTimestampOf,
  deletionTimestampOf,
  isValid,
  labelValue,
  newBackup,
  newBackupStorageLocation,
  newDataDownload,
  newDataUpload,
  newDeleteBackupRequest,
  newDownloadRequest,
  newPodVolumeBackup,
  newPodVolumeRestore,
  newRestore,
  newSchedule,
  newServerStatusRequest,
  newVolumeSnapshotLocation,
  newBackupRepository,
  parseBackup,
  type KindName,
  type SpecOf,
} from '../../../src/api/index.js';
import { validObjects } from './valid-objects.js';

describe('object constructors', () => {
  it('fill apiVersion, kind and metadata, defaulting the namespace to velero', () => {
    const backup = newBackup({ name: 'b1', spec: { ttl: '720h0m0s' } });
    expect(backup).toEqual({
      apiVersion: 'velero.io/v1',
      kind: 'Backup',
      metadata: { namespace: DefaultNamespace, name: 'b1' },
      spec: { ttl: '720h0m0s' },
    });
    expect(parseBackup(backup)).toEqual(backup);
  });

  it('default the spec to {} where Velero has no required spec field', () => {
    expect(newServerStatusRequest({ generateName: 'velero-cli-' })).toEqual({
      apiVersion: 'velero.io/v1',
      kind: 'ServerStatusRequest',
      metadata: { namespace: 'velero', generateName: 'velero-cli-' },
      spec: {},
    });
    expect(newRestore({ name: 'r', namespace: 'ops' }).metadata.namespace).toBe('ops');
  });

  it('copy labels, annotations, finalizers and owner references instead of sharing them', () => {
    const labels = { [Labels.BackupName]: labelValue('b1') };
    const backup = { ...validObjects.Backup, metadata: { ...validObjects.Backup.metadata, uid: 'uid-1' } };
    const pvb = newPodVolumeBackup({
      generateName: 'b1-',
      labels,
      annotations: { 'velero.io/pvc-name': 'data' },
      finalizers: ['velero.io/pod-volume-finalizer'],
      ownerReferences: [controllerReference(backup)],
      spec: validObjects.PodVolumeBackup.spec,
    });
    labels[Labels.BackupName] = 'changed';
    expect(pvb.metadata.labels).toEqual({ 'velero.io/backup-name': 'b1' });
    expect(pvb.metadata.ownerReferences).toEqual([
      { apiVersion: 'velero.io/v1', kind: 'Backup', name: 'nightly-1', uid: 'uid-1', controller: true },
    ]);
    expect(isValid('PodVolumeBackup', pvb)).toBe(true);
  });

  it('produce valid objects for every kind', () => {
    const s = <K extends KindName>(k: K) => ({ name: 'x', spec: structuredClone(validObjects[k].spec) as SpecOf<K> });
    const made = [
      newBackup(s('Backup')),
      newRestore(s('Restore')),
      newSchedule(s('Schedule')),
      newBackupStorageLocation(s('BackupStorageLocation')),
      newVolumeSnapshotLocation(s('VolumeSnapshotLocation')),
      newPodVolumeBackup(s('PodVolumeBackup')),
      newPodVolumeRestore(s('PodVolumeRestore')),
      newBackupRepository(s('BackupRepository')),
      newDeleteBackupRequest(s('DeleteBackupRequest')),
      newDownloadRequest(s('DownloadRequest')),
      newServerStatusRequest(s('ServerStatusRequest')),
      newDataUpload(s('DataUpload')),
      newDataDownload(s('DataDownload')),
    ];
    for (const obj of made) expect(isValid(obj.kind, obj), obj.kind).toBe(true);
    expect(new Set(made.map((o) => o.kind)).size).toBe(13);
  });

  it('type phases so that only Velero values compile', () => {
    const b = newBackup({ name: 'b' });
    b.status = { phase: BackupPhase.InProgress };
    expect(isValid('Backup', b)).toBe(true);
  });
});

describe('metadata timestamps', () => {
  it('read the JSON string or a Date', () => {
    const when = '2025-03-04T05:06:07Z';
    expect(creationTimestampOf({ metadata: { creationTimestamp: when } })?.toISOString()).toBe('2025-03-04T05:06:07.000Z');
    expect(creationTimestampOf({ metadata: { creationTimestamp: new Date(when) } })?.getTime()).toBe(Date.parse(when));
    expect(deletionTimestampOf({ metadata: {} })).toBeUndefined();
    expect(deletionTimestampOf({ metadata: { deletionTimestamp: 'garbage' } })).toBeUndefined();
    expect(creationTimestampOf({})).toBeUndefined();
  });
});

describe('terminal phases', () => {
  it('tell finished work from work in progress', async () => {
    const { isBackupDone, isRestoreDone, isDataPathDone } = await import('../../../src/api/index.js');
    expect(isBackupDone('PartiallyFailed')).toBe(true);
    expect(isBackupDone('WaitingForPluginOperations')).toBe(false);
    expect(isBackupDone(undefined)).toBe(false);
    expect(isRestoreDone('FailedValidation')).toBe(true);
    expect(isRestoreDone('Finalizing')).toBe(false);
    expect(isDataPathDone('Canceled')).toBe(true);
    expect(isDataPathDone('Canceling')).toBe(false);
  });
});
