import { describe, expect, it } from 'vitest';
import { newSchedule, type Schedule, type ScheduleSpec, type ScheduleStatus } from '../../../../src/api/index.js';
import { scheduleDecision, type ScheduleBackupSummary, type ScheduleDecisionInput } from '../../../../src/server/schedule/schedule-decision.js';

const CREATED = '2026-03-01T09:30:00Z';

/** A Schedule as the API server returns it: created at CREATED, hourly unless said otherwise. */
function schedule(spec: Partial<ScheduleSpec> = {}, status: ScheduleStatus = {}, name = 'nightly'): Schedule {
  const s = newSchedule({ namespace: 'velero', name, spec: { schedule: '0 * * * *', template: { ttl: '24h0m0s' }, ...spec } });
  return { ...s, metadata: { ...s.metadata, uid: 'uid-s', creationTimestamp: CREATED } as Schedule['metadata'], status };
}

type Case = Partial<Omit<ScheduleDecisionInput, 'now'>> & { now: string };

function decide(o: Case): ReturnType<typeof scheduleDecision> {
  return scheduleDecision({
    schedule: o.schedule ?? schedule(),
    now: new Date(o.now),
    skipImmediatelyDefault: o.skipImmediatelyDefault ?? false,
    templateProblems: o.templateProblems ?? [],
    backups: o.backups ?? [],
  });
}

const done = (name: string): ScheduleBackupSummary => ({ name, phase: 'Completed' });

describe('scheduleDecision: when a backup is made', () => {
  it.each<[string, Case, object]>([
    ['a new schedule waits for its first activation after creation (no backup at once)', { now: '2026-03-01T09:30:05Z' }, { kind: 'wait', ms: 29 * 60_000 + 55_000 }],
    ['it is due at the activation', { now: '2026-03-01T10:00:00Z' }, { kind: 'create', backupName: 'nightly-20260301100000' }],
    ['a late pass makes the run of the activation it is late for', { now: '2026-03-01T10:00:42Z' }, { kind: 'create', backupName: 'nightly-20260301100000' }],
    [
      'after the last backup, the next activation',
      { schedule: schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T10:00:01Z' }), now: '2026-03-01T10:30:00Z' },
      { kind: 'wait', ms: 30 * 60_000 },
    ],
    [
      'a server down across three activations makes one backup, for the latest',
      { schedule: schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T10:00:01Z' }), now: '2026-03-01T13:20:00Z', backups: [done('nightly-20260301100000')] },
      { kind: 'create', backupName: 'nightly-20260301130000' },
    ],
    [
      'the due run whose backup exists (made before a restart) is only recorded',
      { schedule: schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T10:00:01Z' }), now: '2026-03-01T11:00:03Z', backups: [done('nightly-20260301100000'), { name: 'nightly-20260301110000', phase: 'InProgress' }] },
      { kind: 'record', backupName: 'nightly-20260301110000' },
    ],
    [
      'a backup still running holds the due run back (Velero: no overlapping backups)',
      { schedule: schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T10:00:01Z' }), now: '2026-03-01T11:00:00Z', backups: [{ name: 'nightly-20260301100000', phase: 'InProgress' }] },
      { kind: 'blocked', running: ['nightly-20260301100000'] },
    ],
    [
      "cairn's fs-backup waits in WaitingForPluginOperations: still running",
      { schedule: schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T10:00:01Z' }), now: '2026-03-01T11:00:00Z', backups: [{ name: 'nightly-20260301100000', phase: 'WaitingForPluginOperations' }] },
      { kind: 'blocked' },
    ],
    [
      'a backup with no phase yet is running too',
      { schedule: schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T10:00:01Z' }), now: '2026-03-01T11:00:00Z', backups: [{ name: 'x', phase: undefined }] },
      { kind: 'blocked' },
    ],
    [
      'once it ended, the held-back run is made (one backup, not one per missed activation)',
      { schedule: schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T10:00:01Z' }), now: '2026-03-01T12:10:00Z', backups: [{ name: 'nightly-20260301100000', phase: 'PartiallyFailed' }] },
      { kind: 'create', backupName: 'nightly-20260301120000' },
    ],
    [
      'failed and deleting backups do not hold runs back',
      { schedule: schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T10:00:01Z' }), now: '2026-03-01T11:00:00Z', backups: [{ name: 'a', phase: 'Failed' }, { name: 'b', phase: 'FailedValidation' }, { name: 'c', phase: 'Deleting' }] },
      { kind: 'create' },
    ],
    ['a paused schedule makes nothing', { schedule: schedule({ paused: true }, { phase: 'Enabled', lastBackup: '2026-03-01T05:00:00Z' }), now: '2026-03-01T11:00:00Z' }, { kind: 'none', reason: 'the schedule is paused' }],
    [
      'unpaused without skipImmediately, the run due since it was paused is made at once',
      { schedule: schedule({ paused: false }, { phase: 'Enabled', lastBackup: '2026-03-01T05:00:00Z' }), now: '2026-03-01T11:20:00Z' },
      { kind: 'create', backupName: 'nightly-20260301110000' },
    ],
    [
      '@every counts from the last backup',
      { schedule: schedule({ schedule: '@every 6h' }, { phase: 'Enabled', lastBackup: '2026-03-01T10:00:07Z' }), now: '2026-03-01T16:00:07Z' },
      { kind: 'create', backupName: 'nightly-20260301160007' },
    ],
    [
      'lastSkipped later than lastBackup moves the next run on',
      { schedule: schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T05:00:00Z', lastSkipped: '2026-03-01T10:59:00Z' }), now: '2026-03-01T10:59:30Z' },
      { kind: 'wait', ms: 30_000 },
    ],
    [
      'a clock that went back (NTP) makes nothing twice',
      { schedule: schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T11:00:01Z' }), now: '2026-03-01T10:59:59Z', backups: [done('nightly-20260301110000')] },
      { kind: 'wait' },
    ],
    [
      'a time zone moves the activation',
      { schedule: schedule({ schedule: 'CRON_TZ=Asia/Tokyo 0 1 * * *' }, { phase: 'Enabled', lastBackup: '2026-03-01T10:00:00Z' }), now: '2026-03-01T16:00:00Z' },
      { kind: 'create', backupName: 'nightly-20260301160000' },
    ],
  ])('%s', (_title, input, expected) => {
    const d = decide(input);
    expect(d.action).toMatchObject(expected);
  });
});

describe('scheduleDecision: validation', () => {
  it('is Enabled with no errors for a good schedule', () => {
    expect(decide({ now: '2026-03-01T09:31:00Z' })).toMatchObject({ phase: 'Enabled', validationErrors: [] });
  });

  it.each([
    ['not a cron', 'invalid schedule: expected exactly 5 fields'],
    ['', 'Schedule must be a non-empty valid Cron expression'],
    ['0 0 L * *', 'extension (L, W, # or H)'],
  ])('FailedValidation for the expression %j, and nothing is made', (expr, message) => {
    const d = decide({ schedule: schedule({ schedule: expr }), now: '2026-03-01T12:00:00Z' });
    expect(d.phase).toBe('FailedValidation');
    expect(d.validationErrors.join('\n')).toContain(message);
    expect(d.action.kind).toBe('none');
  });

  it('collects the template problems the caller found, with the cron problem', () => {
    const d = decide({
      schedule: schedule({ schedule: '99 * * * *' }),
      now: '2026-03-01T12:00:00Z',
      templateProblems: ['spec.template.storageLocation: backup storage location "nope" not found in namespace velero'],
    });
    expect(d.phase).toBe('FailedValidation');
    expect(d.validationErrors).toHaveLength(2);
    expect(d.validationErrors[1]).toContain('spec.template.storageLocation');
  });

  it('refuses a name too long for its backups', () => {
    const d = decide({ schedule: schedule({}, {}, 'a'.repeat(239)), now: '2026-03-01T12:00:00Z' });
    expect(d.validationErrors[0]).toContain('metadata.name');
  });

  it('validates a paused schedule too, and makes nothing', () => {
    const d = decide({ schedule: schedule({ paused: true, schedule: 'x' }), now: '2026-03-01T12:00:00Z' });
    expect(d).toMatchObject({ phase: 'FailedValidation', action: { kind: 'none' } });
  });
});

describe('scheduleDecision: skipImmediately', () => {
  it('skips the run due right now and is taken once', () => {
    const d = decide({ schedule: schedule({ skipImmediately: true }, { phase: 'Enabled', lastBackup: '2026-03-01T05:00:00Z' }), now: '2026-03-01T11:20:00Z' });
    expect(d.skippedAt?.toISOString()).toBe('2026-03-01T11:20:00.000Z');
    expect(d.action).toMatchObject({ kind: 'wait', ms: 40 * 60_000 });
  });

  it('follows the server default while the spec leaves it unset', () => {
    const paused = schedule({}, { phase: 'Enabled', lastBackup: '2026-03-01T05:00:00Z' });
    expect(decide({ schedule: paused, now: '2026-03-01T11:20:00Z', skipImmediatelyDefault: true }).skippedAt).toBeDefined();
    expect(decide({ schedule: paused, now: '2026-03-01T11:20:00Z', skipImmediatelyDefault: false }).skippedAt).toBeUndefined();
  });

  it('false in the spec wins over the server default', () => {
    const d = decide({ schedule: schedule({ skipImmediately: false }, { phase: 'Enabled', lastBackup: '2026-03-01T05:00:00Z' }), now: '2026-03-01T11:20:00Z', skipImmediatelyDefault: true });
    expect(d.skippedAt).toBeUndefined();
    expect(d.action.kind).toBe('create');
  });

  it('waits while paused: the skip is taken on the first pass after unpausing', () => {
    const d = decide({ schedule: schedule({ paused: true, skipImmediately: true }), now: '2026-03-01T11:20:00Z' });
    expect(d.skippedAt).toBeUndefined();
    expect(d.action.kind).toBe('none');
  });

  it('is not taken by an invalid schedule', () => {
    expect(decide({ schedule: schedule({ skipImmediately: true, schedule: 'x' }), now: '2026-03-01T11:20:00Z' }).skippedAt).toBeUndefined();
  });
});
