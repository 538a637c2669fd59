import { describe, expect, it } from 'vitest';
import { newBackup, newBackupStorageLocation, newDeleteBackupRequest, type Backup, type BackupStorageLocation, type DeleteBackupRequest } from '../../../src/api/index.js';
import { deleteRequestFor, gcDecision } from '../../../src/server/gc-controller.js';

const now = new Date('2026-01-01T12:00:00Z');
const HOUR = 3600_000;

function backup(status: Backup['status']): Backup {
  const b = newBackup({ namespace: 'cairn', name: 'b1', spec: { storageLocation: 'default' } });
  return { ...b, metadata: { ...b.metadata, uid: 'uid-1' }, ...(status ? { status } : {}) };
}
function location(spec: Partial<BackupStorageLocation['spec']> = {}, phase: 'Available' | 'Unavailable' = 'Available'): BackupStorageLocation {
  return { ...newBackupStorageLocation({ name: 'default', spec: { provider: 'aws', objectStorage: { bucket: 'b' }, ...spec } }), status: { phase } };
}
function request(phase: 'New' | 'InProgress' | 'Processed', createdAt: string): DeleteBackupRequest {
  const r = newDeleteBackupRequest({ name: 'b1-x', spec: { backupName: 'b1' } });
  return { ...r, metadata: { ...r.metadata, creationTimestamp: createdAt } as DeleteBackupRequest['metadata'], status: { phase } };
}
const expired = { phase: 'Completed' as const, expiration: '2026-01-01T11:59:59Z' };

describe('gcDecision', () => {
  it('waits until the expiration, at most one GC period', () => {
    const soon = backup({ phase: 'Completed', expiration: '2026-01-01T12:00:05Z' });
    expect(gcDecision({ backup: soon, location: location(), requests: [], now, gcFrequencyMs: HOUR })).toEqual({ action: 'wait', ms: 5_000 });
    const later = backup({ phase: 'Completed', expiration: '2026-02-01T00:00:00Z' });
    expect(gcDecision({ backup: later, location: location(), requests: [], now, gcFrequencyMs: HOUR })).toEqual({ action: 'wait', ms: HOUR });
  });

  it('requests deletion of an expired backup', () => {
    expect(gcDecision({ backup: backup(expired), location: location(), requests: [], now, gcFrequencyMs: HOUR })).toEqual({ action: 'delete' });
    expect(gcDecision({ backup: backup({ ...expired, phase: 'Failed' }), location: location(), requests: [], now, gcFrequencyMs: HOUR })).toEqual({ action: 'delete' });
  });

  it('leaves backups without expiration and backups still being written', () => {
    expect(gcDecision({ backup: backup({ phase: 'Completed' }), location: location(), requests: [], now, gcFrequencyMs: HOUR }).action).toBe('none');
    expect(gcDecision({ backup: backup({ ...expired, phase: 'InProgress' }), location: location(), requests: [], now, gcFrequencyMs: HOUR }).action).toBe('none');
  });

  it('labels the reason when the location is missing, ReadOnly or Unavailable', () => {
    const b = backup(expired);
    expect(gcDecision({ backup: b, location: undefined, requests: [], now, gcFrequencyMs: HOUR })).toEqual({ action: 'label', failure: 'BSLNotFound' });
    expect(gcDecision({ backup: b, location: location({ accessMode: 'ReadOnly' }), requests: [], now, gcFrequencyMs: HOUR })).toEqual({ action: 'label', failure: 'BSLReadOnly' });
    expect(gcDecision({ backup: b, location: location({}, 'Unavailable'), requests: [], now, gcFrequencyMs: HOUR })).toEqual({ action: 'label', failure: 'BSLUnavailable' });
  });

  it('makes one request at a time, and retries a failed deletion one GC period later', () => {
    const b = backup(expired);
    expect(gcDecision({ backup: b, location: location(), requests: [request('New', '2026-01-01T11:59:59Z')], now, gcFrequencyMs: HOUR }).action).toBe('none');
    expect(gcDecision({ backup: b, location: location(), requests: [request('Processed', '2026-01-01T11:30:00Z')], now, gcFrequencyMs: HOUR })).toEqual({ action: 'wait', ms: HOUR / 2 });
    expect(gcDecision({ backup: b, location: location(), requests: [request('Processed', '2026-01-01T10:30:00Z')], now, gcFrequencyMs: HOUR })).toEqual({ action: 'delete' });
  });
});

describe('deleteRequestFor', () => {
  it('names and labels the request as Velero does', () => {
    const r = deleteRequestFor(backup(expired), 'cairn');
    expect(r.metadata).toEqual({ namespace: 'cairn', generateName: 'b1-', labels: { 'velero.io/backup-name': 'b1', 'velero.io/backup-uid': 'uid-1' } });
    expect(r.spec).toEqual({ backupName: 'b1' });
  });
});
