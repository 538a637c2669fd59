import { describe, expect, it } from 'vitest';
import { newBackup, newBackupStorageLocation, type BackupSpec, type BackupStorageLocation } from '../../../../src/api/index.js';
import { backupFieldWarnings, backupValidationErrors } from '../../../../src/server/backup/validation.js';

const bsl = (patch: { accessMode?: 'ReadOnly' | 'ReadWrite'; phase?: 'Available' | 'Unavailable' } = {}): BackupStorageLocation => {
  const l = newBackupStorageLocation({ namespace: 'velero', name: 'default', spec: { provider: 'aws', objectStorage: { bucket: 'b' }, ...(patch.accessMode ? { accessMode: patch.accessMode } : {}) } });
  if (patch.phase) l.status = { phase: patch.phase };
  return l;
};
const errorsOf = (spec: BackupSpec, location: BackupStorageLocation | null = bsl(), fromSpec = false) =>
  backupValidationErrors({ backup: newBackup({ namespace: 'velero', name: 'b', spec }), location: location ?? undefined, locationName: spec.storageLocation ?? 'default', locationFromSpec: fromSpec });

describe('backup validation', () => {
  it('accepts a plain backup', () => {
    expect(errorsOf({ includedNamespaces: ['app'], ttl: '24h0m0s' })).toEqual([]);
  });

  it('names a missing location given in the spec', () => {
    expect(errorsOf({ storageLocation: 'nowhere' }, null, true)).toEqual(['error getting backup storage location: backupstoragelocations.velero.io "nowhere" not found']);
  });

  it('explains a missing default location', () => {
    const [e] = errorsOf({}, null, false);
    expect(e).toContain("the default 'default' wasn't found");
  });

  it('refuses read-only and Unavailable locations', () => {
    expect(errorsOf({}, bsl({ accessMode: 'ReadOnly' }))).toEqual(["backup can't be created because backup storage location default is currently in read-only mode"]);
    expect(errorsOf({}, bsl({ phase: 'Unavailable' }))[0]).toContain('is in Unavailable status');
  });

  it('lists every reason at once', () => {
    const errors = errorsOf(
      {
        includedNamespaces: ['a'],
        excludedNamespaces: ['a'],
        includedResources: ['*', 'pods'],
        includedClusterScopedResources: ['persistentvolumes'],
        labelSelector: { matchLabels: { a: 'b' } },
        orLabelSelectors: [{ matchLabels: { c: 'd' } }],
        ttl: 'forever',
      },
      bsl({ accessMode: 'ReadOnly' }),
    );
    expect(errors).toEqual([
      "Invalid included/excluded resource lists: includes list must either contain '*' only, or a non-empty list of items",
      'Invalid included/excluded namespace lists: excludes list cannot contain an item in the includes list: a',
      expect.stringContaining('They cannot be used together'),
      'encountered labelSelector as well as orLabelSelectors in backup spec, only one can be specified',
      'invalid ttl "forever": not a duration such as 720h0m0s',
      "backup can't be created because backup storage location default is currently in read-only mode",
    ]);
  });

  it('rejects bad selector operators', () => {
    expect(errorsOf({ labelSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } })).toEqual(['Invalid label selector: "Near" is not a valid label selector operator']);
  });

  it('accepts spec.resourcePolicy (its ConfigMap is read and checked by the controller) and spec.orderedResources', () => {
    expect(errorsOf({ resourcePolicy: { kind: 'configmap', name: 'policies' } })).toEqual([]);
    expect(errorsOf({ orderedResources: { pods: 'ns/a,ns/b' } })).toEqual([]);
  });

  it('warns about spec.volumeSnapshotLocations and spec.volumeGroupSnapshotLabelKey (the backup is still useful)', () => {
    expect(errorsOf({ volumeSnapshotLocations: ['aws-ebs'], volumeGroupSnapshotLabelKey: 'velero.io/volume-group' })).toEqual([]);
    expect(backupFieldWarnings({ volumeSnapshotLocations: ['aws-ebs'] })).toEqual([
      'spec.volumeSnapshotLocations (aws-ebs) is not acted on: cairn has no volume snapshotter plugins, so no native volume snapshots are taken',
    ]);
    expect(backupFieldWarnings({ volumeGroupSnapshotLabelKey: 'velero.io/volume-group' })[0]).toContain('spec.volumeGroupSnapshotLabelKey (velero.io/volume-group) is not acted on');
    expect(backupFieldWarnings({ includedNamespaces: ['a'] })).toEqual([]);
  });
});
