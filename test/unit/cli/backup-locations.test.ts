import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/base/errors.js';
import { buildLocation, locationColumns, parseCredential } from '../../../src/cli/backup-locations.js';
import { formatTable } from '../../../src/cli/output.js';
import { parseBackupStorageLocation } from '../../../src/api/index.js';

describe('backup-location create', () => {
  it('builds a valid BackupStorageLocation from flags', () => {
    const loc = buildLocation({
      name: 'secondary',
      namespace: 'velero',
      provider: 'aws',
      bucket: 'backups-2',
      prefix: 'team-a/',
      config: 'region=eu-west-1,s3ForcePathStyle=true',
      credential: 'cloud-credentials=cloud',
      default: true,
      'validation-frequency': '30s',
    });
    expect(parseBackupStorageLocation(loc)).toEqual(loc);
    expect(loc.spec).toEqual({
      provider: 'aws',
      objectStorage: { bucket: 'backups-2', prefix: 'team-a' },
      accessMode: 'ReadWrite',
      config: { region: 'eu-west-1', s3ForcePathStyle: 'true' },
      credential: { name: 'cloud-credentials', key: 'cloud' },
      default: true,
      validationFrequency: '30s',
    });
  });

  it('leaves a provider no built-in serves, and its bucket and config, to the plugin that serves it', () => {
    const loc = buildLocation({ name: 'gcs', namespace: 'velero', provider: 'gcp', bucket: 'My_Bucket', config: 'serviceAccount=backup@p.iam' });
    expect(loc.spec).toMatchObject({ provider: 'gcp', objectStorage: { bucket: 'My_Bucket' }, config: { serviceAccount: 'backup@p.iam' } });
  });

  it.each([
    [{ name: 'Bad_Name' }, 'NAME'],
    [{ provider: 'no such provider' }, '--provider'],
    [{ config: 'region' }, '--config'],
    [{ config: 'bogus=1' }, '--config'],
    [{ credential: 'a=b,c=d' }, '--credential'],
    [{ 'access-mode': 'WriteOnly' }, '--access-mode'],
    [{ 'backup-sync-period': 'often' }, '--backup-sync-period'],
    [{ cacert: '/does/not/exist.pem' }, '--cacert'],
  ])('rejects %j naming %s', (override, flag) => {
    const flags = { name: 'loc', namespace: 'velero', provider: 'aws', bucket: 'bucket', ...override };
    let caught: unknown;
    try {
      buildLocation(flags);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(UsageError);
    expect((caught as UsageError).flag).toBe(flag);
  });

  it('parses secret=key credentials', () => {
    expect(parseCredential('--credential', 'creds=cloud')).toEqual({ name: 'creds', key: 'cloud' });
  });

  it('prints Velero columns', () => {
    const loc = buildLocation({ name: 'default', namespace: 'velero', provider: 'aws', bucket: 'b1b', prefix: 'p', default: true });
    loc.status = { phase: 'Available' };
    const [header, row] = formatTable(locationColumns, [loc]).split('\n');
    expect(header?.split(/\s{3,}/)).toEqual(['NAME', 'PROVIDER', 'BUCKET/PREFIX', 'PHASE', 'LAST VALIDATED', 'ACCESS MODE', 'DEFAULT']);
    expect(row?.split(/\s{3,}/)).toEqual(['default', 'aws', 'b1b/p', 'Available', 'Unknown', 'ReadWrite', 'true']);
  });
});
