import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newBackupStorageLocation, type BackupStorageLocation } from '../../../src/api/index.js';
import {
  describeLocationError,
  nextValidationInMs,
  outcomeFromLayout,
  shouldBecomeDefault,
  ValidationStores,
  validateLocation,
  validationFrequencyMs,
} from '../../../src/server/backup-storage-location-controller.js';
import { ObjectNotFoundError, ObjectStoreError } from '../../../src/plugins/object-store/index.js';
import type { Kube } from '../../../src/kube/client.js';

const noKube = {} as Kube;

function location(spec: Partial<BackupStorageLocation['spec']> = {}, status?: BackupStorageLocation['status']): BackupStorageLocation {
  const l = newBackupStorageLocation({ name: 'loc', spec: { provider: 'aws', objectStorage: { bucket: 'b' }, config: { s3Url: 'http://minio:9000' }, ...spec } });
  return status ? { ...l, status } : l;
}

describe('validation schedule', () => {
  const now = new Date('2026-01-01T00:10:00Z');

  it('uses the location frequency, else the server default; 0 disables', () => {
    expect(validationFrequencyMs(location(), 60_000)).toBe(60_000);
    expect(validationFrequencyMs(location({ validationFrequency: '10s' }), 60_000)).toBe(10_000);
    expect(validationFrequencyMs(location({ validationFrequency: '0s' }), 60_000)).toBe(0);
  });

  it('validates a never-validated location at once, even with frequency 0', () => {
    expect(nextValidationInMs({ location: location({ validationFrequency: '0s' }), serverDefaultMs: 60_000, now, specChanged: false })).toBe(0);
  });

  it('waits for the period after the last validation', () => {
    const l = location({}, { phase: 'Available', lastValidationTime: '2026-01-01T00:09:30Z' });
    expect(nextValidationInMs({ location: l, serverDefaultMs: 60_000, now, specChanged: false })).toBe(30_000);
    expect(nextValidationInMs({ location: l, serverDefaultMs: 20_000, now, specChanged: false })).toBe(0);
  });

  it('validates a changed spec at once, and never again periodically when disabled', () => {
    const l = location({ validationFrequency: '0s' }, { phase: 'Unavailable', lastValidationTime: '2026-01-01T00:09:30Z' });
    expect(nextValidationInMs({ location: l, serverDefaultMs: 60_000, now, specChanged: true })).toBe(0);
    expect(nextValidationInMs({ location: l, serverDefaultMs: 60_000, now, specChanged: false })).toBeUndefined();
  });
});

describe('default location', () => {
  const named = (name: string, isDefault?: boolean) =>
    newBackupStorageLocation({ name, spec: { provider: 'aws', objectStorage: { bucket: 'b' }, ...(isDefault ? { default: true } : {}) } });

  it('marks the location named like the server default when no location is default', () => {
    const all = [named('default'), named('other')];
    expect(shouldBecomeDefault(all[0]!, all, 'default')).toBe(true);
    expect(shouldBecomeDefault(all[1]!, all, 'default')).toBe(false);
  });

  it('leaves things alone when some location is already default', () => {
    const all = [named('default'), named('other', true)];
    expect(shouldBecomeDefault(all[0]!, all, 'default')).toBe(false);
  });
});

describe('validation outcome', () => {
  it('is Available without layout problems and Unavailable with them', () => {
    expect(outcomeFromLayout([])).toEqual({ phase: 'Available', message: '' });
    const out = outcomeFromLayout(['unexpected directory "junk/" at the top level of the location']);
    expect(out.phase).toBe('Unavailable');
    expect(out.message).toContain('junk/');
  });

  it('explains a missing bucket, denied access, an unreachable endpoint and a missing Secret', () => {
    const l = location();
    expect(describeLocationError(new ObjectNotFoundError(''), l)).toBe('bucket "b" at http://minio:9000 does not exist');
    const denied = new ObjectStoreError('s3: HTTP 403 InvalidAccessKeyId on : The Access Key Id you provided does not exist in our records.', { retryable: false });
    expect(describeLocationError(denied, l)).toMatch(/^access to bucket "b" at http:\/\/minio:9000 denied \(check the location's credentials\)/);
    const refused = new ObjectStoreError('s3: ECONNREFUSED on : connect ECONNREFUSED 127.0.0.1:1', { retryable: true });
    expect(describeLocationError(refused, l)).toMatch(/^cannot reach the object store for bucket "b"/);
    const withSecret = location({ credential: { name: 'creds', key: 'cloud' } });
    expect(describeLocationError(Object.assign(new Error('HTTP-Code: 404'), { code: 404 }), withSecret)).toBe('credentials Secret "creds" not found');
  });
});

describe('validateLocation on a filesystem location', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  function fsLocation(): { loc: BackupStorageLocation; base: string } {
    const root = mkdtempSync(join(tmpdir(), 'cairn-bsl-'));
    dirs.push(root);
    const loc = location({ provider: 'filesystem', config: { root }, objectStorage: { bucket: 'bkt', prefix: 'p' } });
    return { loc, base: join(root, 'bkt', 'p') };
  }

  it('is Available with Velero directories only', async () => {
    const { loc, base } = fsLocation();
    mkdirSync(join(base, 'backups', 'b1'), { recursive: true });
    writeFileSync(join(base, 'backups', 'b1', 'velero-backup.json'), '{}');
    expect(await validateLocation({ location: loc, ctx: { kube: noKube } })).toEqual({ phase: 'Available', message: '' });
  });

  it('is Unavailable with an unexpected top-level directory, naming it', async () => {
    const { loc, base } = fsLocation();
    mkdirSync(join(base, 'photos'), { recursive: true });
    writeFileSync(join(base, 'photos', 'cat.jpg'), 'x');
    const out = await validateLocation({ location: loc, ctx: { kube: noKube } });
    expect(out.phase).toBe('Unavailable');
    expect(out.message).toContain('"photos/"');
  });

  it('is Unavailable with a clear reason when the provider is unknown', async () => {
    const out = await validateLocation({ location: location({ provider: 'gcp' }), ctx: { kube: noKube } });
    expect(out).toEqual({ phase: 'Unavailable', message: expect.stringContaining('provider "gcp" is not supported') });
  });

  it('is Unavailable within the timeout when the endpoint does not answer', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY, file: process.env.AWS_SHARED_CREDENTIALS_FILE };
    process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
    process.env.AWS_SECRET_ACCESS_KEY = 'not-a-real-secret-value';
    delete process.env.AWS_SHARED_CREDENTIALS_FILE;
    try {
      const out = await validateLocation({ location: location({ config: { s3Url: 'http://127.0.0.1:1', region: 'us-east-1', s3ForcePathStyle: 'true' } }), ctx: { kube: noKube }, timeoutMs: 8_000 });
      expect(out.phase).toBe('Unavailable');
      expect(out.message).toMatch(/cannot reach the object store for bucket "b" at http:\/\/127\.0\.0\.1:1/);
      expect(out.message).not.toContain('not-a-real-secret-value');
    } finally {
      for (const [k, v] of [['AWS_ACCESS_KEY_ID', saved.id], ['AWS_SECRET_ACCESS_KEY', saved.secret], ['AWS_SHARED_CREDENTIALS_FILE', saved.file]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('reuses the opened store while the spec stays the same', async () => {
    const { loc } = fsLocation();
    const stores = new ValidationStores();
    const first = await stores.open(loc, noKube);
    expect(await stores.open(structuredClone(loc), noKube)).toBe(first);
    const changed = { ...loc, spec: { ...loc.spec, objectStorage: { bucket: 'other' } } };
    expect(await stores.open(changed, noKube)).not.toBe(first);
  });
});
