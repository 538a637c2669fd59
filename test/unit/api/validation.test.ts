import { describe, expect, it } from 'vitest';
import {
  BackupPhase,
  KindNames,
  Kinds,
  ValidationError,
  isValid,
  parse,
  parseBackup,
  parseBackupStorageLocation,
  parseDataDownload,
  parseDataUpload,
  parseDeleteBackupRequest,
  parseDownloadRequest,
  parsePodVolumeBackup,
  parsePodVolumeRestore,
  parseRestore,
  parseSchedule,
  parseServerStatusRequest,
  parseVolumeSnapshotLocation,
  parseBackupRepository,
  problemsIn,
  type KindName,
} from '../../../src/api/index.js';
import { ExitCode, exitCodeFor } from '../../../src/base/errors.js';
import { requiredSpecFields, validObjects, withField, wrongTypeFields } from './valid-objects.js';
import { expectThrown } from '../../support/thrown.js';

const errorOf = (fn: () => unknown) => expectThrown(ValidationError, fn);

describe.each(KindNames)('%s', (kind: KindName) => {
  const valid = validObjects[kind];
  const name = `${valid.metadata.namespace}/${valid.metadata.name}`;

  it('parses a valid object and returns it unchanged', () => {
    expect(parse(kind, structuredClone(valid))).toEqual(valid);
    expect(isValid(kind, valid)).toBe(true);
  });

  it('rejects an unknown phase, naming status.phase and the allowed values', () => {
    const err = errorOf(() => parse(kind, withField(valid, 'status.phase', 'Bogus')));
    expect(err.field).toBe('status.phase');
    expect(err.message).toContain(`${kind} ${name}: status.phase: expected one of "`);
    expect(err.message).toContain('got "Bogus"');
    expect(exitCodeFor(err)).toBe(ExitCode.Failed);
  });

  it('rejects a field of the wrong type, naming the field', () => {
    const { field, value } = wrongTypeFields[kind];
    const err = errorOf(() => parse(kind, withField(valid, field, value)));
    expect(err.field).toBe(field);
    expect(err.message).toMatch(new RegExp(`^${kind} ${name}: ${field.replaceAll('.', '\\.')}: expected `));
  });

  it('allows unknown extra fields (objects from newer versions)', () => {
    const extended = withField(withField(valid, 'spec.someFutureField', { a: 1 }), 'status.newCounter', 3);
    expect(parse(kind, extended)).toEqual(extended);
  });

  it('fills in a missing apiVersion and kind but rejects different ones', () => {
    const { apiVersion: _a, kind: _k, ...bare } = structuredClone(valid);
    expect(parse(kind, bare)).toEqual(valid);
    expect(errorOf(() => parse(kind, { ...valid, apiVersion: 'velero.io/v9' })).field).toBe('apiVersion');
    const other = kind === 'Backup' ? 'Restore' : 'Backup';
    expect(errorOf(() => parse(kind, { ...valid, kind: other })).message).toContain(`kind: expected "${kind}"`);
  });

  const required = requiredSpecFields[kind];
  if (required) {
    it(`requires spec.${required}`, () => {
      const err = errorOf(() => parse(kind, withField(valid, `spec.${required}`, undefined)));
      expect(err.message).toBe(`${kind} ${name}: spec.${required}: is required`);
    });
  } else {
    it('accepts an object without spec (no spec field is required)', () => {
      const { spec: _s, ...noSpec } = structuredClone(valid);
      expect(parse(kind, noSpec).spec).toEqual({});
    });
  }
});

describe('validation messages', () => {
  const backup = validObjects.Backup;

  it('explains a bad duration the way a user writes one', () => {
    const err = errorOf(() => parseBackup(withField(backup, 'spec.ttl', '30 days')));
    expect(err.message).toBe('Backup velero/nightly-1: spec.ttl: expected duration string like "720h0m0s", got "30 days"');
  });

  it('names list items and nested fields by their path', () => {
    const bad = structuredClone(backup);
    bad.spec.hooks = { resources: [{ name: 'h', pre: [{ exec: { command: ['x'], onError: 'Ignore' as 'Fail' } }] }] };
    expect(errorOf(() => parseBackup(bad)).field).toBe('spec.hooks.resources[0].pre[0].exec.onError');
    bad.spec.hooks = { resources: [{ name: 'h', pre: [{ exec: { command: [] } }] }] };
    expect(errorOf(() => parseBackup(bad)).message).toContain('spec.hooks.resources[0].pre[0].exec.command: expected at least 1 item');
  });

  it('looks inside nullable fields instead of blaming the whole field', () => {
    const err = errorOf(() => parseBackup(withField(backup, 'spec.labelSelector', { matchLabels: { app: 5 } })));
    expect(err.field).toBe('spec.labelSelector.matchLabels.app');
    expect(err.problem).toBe('expected string, got 5');
  });

  it('accepts null where Velero writes null, and rejects bad timestamps', () => {
    expect(parseBackup(withField(backup, 'status.completionTimestamp', null)).status?.completionTimestamp).toBeNull();
    const err = errorOf(() => parseBackup(withField(backup, 'status.startTimestamp', 'yesterday')));
    expect(err.message).toContain('status.startTimestamp: expected RFC 3339 timestamp');
  });

  it('drops null from optional fields that are not nullable, as the API server does, without touching the input', () => {
    const input = structuredClone(backup) as unknown as Record<string, Record<string, unknown>>;
    input.spec = { ...input.spec, hooks: { resources: [{ name: 'h', pre: null, post: [{ exec: { command: ['x'], timeout: null } }] }] } };
    input.status = { ...input.status, failureReason: null, completionTimestamp: null };
    const before = JSON.stringify(input);
    const parsed = parseBackup(input);
    expect(parsed.spec.hooks?.resources?.[0]).toEqual({ name: 'h', post: [{ exec: { command: ['x'] } }] });
    expect(parsed.status && 'failureReason' in parsed.status).toBe(false);
    expect(parsed.status?.completionTimestamp).toBeNull();
    expect(JSON.stringify(input)).toBe(before);
    expect(errorOf(() => parseDeleteBackupRequest(withField(validObjects.DeleteBackupRequest, 'spec.backupName', null))).problem).toBe(
      'expected string, got null',
    );
  });

  it('shows the type, not the content, of a string found where something else was expected', () => {
    const bsl = withField(validObjects.BackupStorageLocation, 'spec.config', 'secretAccessKey=abc123');
    const err = errorOf(() => parseBackupStorageLocation(bsl));
    expect(err.message).toBe('BackupStorageLocation velero/default: spec.config: expected object, got string');
    expect(err.message).not.toContain('abc123');
  });

  it('quotes map keys that are not identifiers', () => {
    const err = errorOf(() => parseBackup(withField(backup, 'metadata.labels', { 'velero.io/storage-location': 1 })));
    expect(err.field).toBe('metadata.labels["velero.io/storage-location"]');
  });

  it('counts further problems and lists them all', () => {
    const bad = withField(withField(backup, 'spec.ttl', 'x'), 'status.phase', 'Nope');
    const err = errorOf(() => parseBackup(bad));
    expect(err.message).toMatch(/\(and 1 more\)$/);
    expect(err.problems.map((p) => p.field)).toEqual(['spec.ttl', 'status.phase']);
    expect(problemsIn('Backup', bad)).toHaveLength(2);
  });

  it('rejects non-objects and shows generateName when there is no name', () => {
    expect(errorOf(() => parseBackup('backup')).message).toBe('Backup: expected an object, got string');
    expect(errorOf(() => parseBackup(null)).message).toBe('Backup: expected an object, got null');
    const generated = { ...backup, metadata: { namespace: 'velero', generateName: 'nightly-' }, status: { phase: 'X' } };
    expect(errorOf(() => parseBackup(generated)).message).toMatch(/^Backup velero\/nightly-\*: status\.phase/);
  });

  it('rejects restic PVBs: the CRD follows the v1.17 fs-backup design (kopia only)', () => {
    const err = errorOf(() => parsePodVolumeBackup(withField(validObjects.PodVolumeBackup, 'spec.uploaderType', 'restic')));
    expect(err.message).toContain('spec.uploaderType: expected one of "kopia", ""');
  });

  it('types phases by name', () => {
    const parsed = parseBackup(backup);
    expect(parsed.status?.phase).toBe(BackupPhase.Completed);
  });

  it('offers one named parser per kind', () => {
    const parsers = {
      Backup: parseBackup,
      Restore: parseRestore,
      Schedule: parseSchedule,
      BackupStorageLocation: parseBackupStorageLocation,
      VolumeSnapshotLocation: parseVolumeSnapshotLocation,
      PodVolumeBackup: parsePodVolumeBackup,
      PodVolumeRestore: parsePodVolumeRestore,
      BackupRepository: parseBackupRepository,
      DeleteBackupRequest: parseDeleteBackupRequest,
      DownloadRequest: parseDownloadRequest,
      ServerStatusRequest: parseServerStatusRequest,
      DataUpload: parseDataUpload,
      DataDownload: parseDataDownload,
    } satisfies Record<KindName, (v: unknown) => unknown>;
    expect(Object.keys(parsers).sort()).toEqual(Object.keys(Kinds).sort());
    for (const [kind, parser] of Object.entries(parsers)) {
      expect(parser(validObjects[kind as KindName])).toEqual(validObjects[kind as KindName]);
    }
  });
});
