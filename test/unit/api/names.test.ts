import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  Annotations,
  Finalizers,
  Labels,
  getValidName,
  isValidDnsLabel,
  isValidLabelValue,
  isValidName,
  labelValue,
  legacySnapshotAnnotation,
  nameProblem,
  selectorFor,
} from '../../../src/api/index.js';

describe('labelValue (Velero GetValidName)', () => {
  it('keeps names of up to 63 characters', () => {
    expect(labelValue('nightly-20250304010000')).toBe('nightly-20250304010000');
    const exactly63 = 'a'.repeat(63);
    expect(labelValue(exactly63)).toBe(exactly63);
  });

  it('shortens longer names to 57 characters plus 6 hex digits of their sha256', () => {
    const long = `schedule-${'x'.repeat(60)}-20250304010000`;
    const sha = createHash('sha256').update(long).digest('hex');
    const value = labelValue(long);
    expect(value).toBe(long.slice(0, 57) + sha.slice(0, 6));
    expect(value).toHaveLength(63);
    expect(isValidLabelValue(value)).toBe(true);
    expect(getValidName(long)).toBe(value);
  });

  it('gives different values to names that share their first 57 characters', () => {
    const a = `${'p'.repeat(60)}-a`;
    const b = `${'p'.repeat(60)}-b`;
    expect(labelValue(a)).not.toBe(labelValue(b));
  });
});

describe('name validation', () => {
  it.each(['default', 'nightly-1', 'a', 'backup.v1', 'a'.repeat(253), '0abc'])('accepts %s', (name) => {
    expect(isValidName(name)).toBe(true);
    expect(nameProblem(name)).toBeUndefined();
  });

  it.each(['', 'My_Backup', '-lead', 'trail-', 'UPPER', 'a b', 'a'.repeat(254), 'dot.', 'x..y'])('rejects %j', (name) => {
    expect(isValidName(name)).toBe(false);
    expect(nameProblem(name)).toBeDefined();
  });

  it('explains the rule in one line', () => {
    expect(nameProblem('My_Backup')).toBe(
      `"My_Backup" must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    );
    expect(nameProblem('')).toBe('must not be empty');
  });

  it('DNS labels forbid dots and more than 63 characters', () => {
    expect(isValidDnsLabel('velero')).toBe(true);
    expect(isValidDnsLabel('a.b')).toBe(false);
    expect(isValidDnsLabel('a'.repeat(64))).toBe(false);
  });

  it('label values allow upper case, dots and underscores but not leading symbols', () => {
    expect(isValidLabelValue('')).toBe(true);
    expect(isValidLabelValue('My_Value.1')).toBe(true);
    expect(isValidLabelValue('_x')).toBe(false);
    expect(isValidLabelValue('a'.repeat(64))).toBe(false);
  });
});

describe('well-known keys', () => {
  it('match Velero', () => {
    expect(Labels).toMatchObject({
      BackupName: 'velero.io/backup-name',
      BackupUID: 'velero.io/backup-uid',
      RestoreName: 'velero.io/restore-name',
      PVCUID: 'velero.io/pvc-uid',
      StorageLocation: 'velero.io/storage-location',
      VolumeNamespace: 'velero.io/volume-namespace',
      RepositoryType: 'velero.io/repository-type',
      PodUID: 'velero.io/pod-uid',
    });
    expect(Annotations).toMatchObject({ BackupVolumes: 'backup.velero.io/backup-volumes', BackupVolumesExcludes: 'backup.velero.io/backup-volumes-excludes', PVCName: 'velero.io/pvc-name' });
    expect(Finalizers).toMatchObject({ PodVolume: 'velero.io/pod-volume-finalizer', RestoreExternalResources: 'restores.velero.io/external-resources-finalizer' });
    expect(legacySnapshotAnnotation('data')).toBe('snapshot.velero.io/data');
  });

  it('are all distinct within each group', () => {
    for (const group of [Labels, Finalizers]) {
      const values = Object.values(group);
      expect(new Set(values).size).toBe(values.length);
    }
  });
});

describe('selectorFor', () => {
  it('joins exact matches in a stable order', () => {
    expect(selectorFor({ [Labels.BackupUID]: 'u1', [Labels.BackupName]: labelValue('b1') })).toBe(
      'velero.io/backup-name=b1,velero.io/backup-uid=u1',
    );
    expect(selectorFor({})).toBe('');
  });
});
