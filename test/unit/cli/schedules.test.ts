import { describe, expect, it } from 'vitest';
import { givenBackupSpecFlags } from '../../../src/cli/backups.js';
import { buildRestore } from '../../../src/cli/restores.js';
import { buildSchedule, pauseChange, scheduleColumns, timeFromNow } from '../../../src/cli/schedules.js';
import { describeSchedule } from '../../../src/cli/describe/schedule.js';
import { colours } from '../../../src/cli/colour.js';
import { formatTable } from '../../../src/cli/output.js';
import { parseSchedule, type Schedule } from '../../../src/api/index.js';
import { usageMessage } from './usage-message.js';

describe('schedule create flags → Schedule', () => {
  it('puts the backup flags in the template and the schedule flags in the spec, as Velero does', () => {
    const s = buildSchedule({ name: 'nightly', namespace: 'velero', schedule: '0 1 * * *', 'include-namespaces': 'shop', ttl: '168h', labels: 'team=shop', 'storage-location': 'default' });
    expect(parseSchedule(s)).toEqual(s);
    expect(s).toEqual({
      apiVersion: 'velero.io/v1',
      kind: 'Schedule',
      metadata: { namespace: 'velero', name: 'nightly', labels: { team: 'shop' } },
      spec: {
        schedule: '0 1 * * *',
        useOwnerReferencesInBackup: false,
        paused: false,
        template: { includedNamespaces: ['shop'], ttl: '168h0m0s', storageLocation: 'default' },
      },
    });
  });

  it('sets paused, skipImmediately (only when given) and owner references', () => {
    const s = buildSchedule({ name: 'n', namespace: 'velero', schedule: '@every 6h', paused: true, 'skip-immediately': false, 'use-owner-references-in-backup': true });
    expect(s.spec).toMatchObject({ paused: true, skipImmediately: false, useOwnerReferencesInBackup: true });
    expect(buildSchedule({ name: 'n', namespace: 'velero', schedule: '@daily' }).spec.skipImmediately).toBeUndefined();
  });

  it('refuses a missing or invalid --schedule, naming the flag', () => {
    expect(usageMessage(() => buildSchedule({ name: 'n', namespace: 'velero' }))).toContain('--schedule');
    expect(usageMessage(() => buildSchedule({ name: 'n', namespace: 'velero', schedule: '0 1 * *' }))).toMatch(/--schedule.*expected exactly 5 fields/);
    expect(usageMessage(() => buildSchedule({ name: 'n', namespace: 'velero', schedule: 'CRON_TZ=Nowhere/Land 0 1 * * *' }))).toMatch(/--schedule.*unknown time zone/);
  });

  it('checks the backup flags with the same rules as backup create', () => {
    expect(usageMessage(() => buildSchedule({ name: 'n', namespace: 'velero', schedule: '@daily', ttl: '3 days' }))).toContain('--ttl');
    expect(usageMessage(() => buildSchedule({ name: 'Bad_Name', namespace: 'velero', schedule: '@daily' }))).toContain('NAME');
  });
});

describe('backup create --from-schedule', () => {
  it('knows which backup flags were given (they cannot be combined with it)', () => {
    expect(givenBackupSpecFlags({ ttl: '1h', 'include-namespaces': 'a', 'snapshot-volumes': false })).toEqual(['--include-namespaces', '--ttl', '--snapshot-volumes']);
    expect(givenBackupSpecFlags({})).toEqual([]);
  });
});

describe('restore create --from-schedule', () => {
  it('names the schedule in spec.scheduleName and the restore after it', () => {
    const r = buildRestore({ namespace: 'velero', 'from-schedule': 'nightly' }, new Date('2026-03-01T02:03:04Z'));
    expect(r.metadata.name).toBe('nightly-20260301020304');
    expect(r.spec).toEqual({ scheduleName: 'nightly', includedNamespaces: ['*'] });
  });

  it('refuses both sources at once', () => {
    expect(usageMessage(() => buildRestore({ namespace: 'velero', 'from-schedule': 'n', 'from-backup': 'b' }))).toContain('--from-schedule');
  });
});

function schedule(spec: Partial<Schedule['spec']> = {}, status: Schedule['status'] = {}): Schedule {
  const s = buildSchedule({ name: 'nightly', namespace: 'velero', schedule: '0 1 * * *', ttl: '72h', selector: 'app=web' });
  return { ...s, metadata: { ...s.metadata, creationTimestamp: '2026-03-01T00:00:00Z' } as Schedule['metadata'], spec: { ...s.spec, ...spec }, status };
}

describe('schedule get', () => {
  it("prints Velero's columns", () => {
    const now = new Date('2026-03-02T03:00:00Z');
    const table = formatTable(scheduleColumns(now), [schedule({}, { phase: 'Enabled', lastBackup: '2026-03-02T01:00:00Z' }), { ...schedule({ paused: true }), metadata: { name: 'weekly', namespace: 'velero' } }]);
    expect(table.split('\n')).toEqual([
      'NAME      STATUS    CREATED                         SCHEDULE    BACKUP TTL   LAST BACKUP   SELECTOR   PAUSED',
      'nightly   Enabled   2026-03-01 00:00:00 +0000 UTC   0 1 * * *   72h0m0s      2h ago        app=web    false',
      'weekly    New       <nil>                           0 1 * * *   72h0m0s      n/a           app=web    true',
    ]);
  });

  it('says when a time is, from now', () => {
    const now = new Date('2026-03-02T03:00:00Z');
    expect(timeFromNow(undefined, now)).toBe('n/a');
    expect(timeFromNow('2026-03-02T03:05:00Z', now)).toBe('5m');
    expect(timeFromNow('2026-02-28T03:00:00Z', now)).toBe('2d ago');
  });
});

describe('schedule pause/unpause', () => {
  it('leaves a schedule already so, else sets paused and skipImmediately as given (unset = server default)', () => {
    expect(pauseChange(schedule({ paused: true }), true, undefined)).toEqual({ change: false, message: 'Schedule nightly is already paused, skip' });
    const unpause = pauseChange(schedule({ paused: true, skipImmediately: false }), false, undefined);
    expect(unpause.change).toBe(true);
    const s = schedule({ paused: true, skipImmediately: false });
    if (unpause.change) unpause.apply(s);
    expect(s.spec.paused).toBe(false);
    expect(s.spec.skipImmediately).toBeUndefined();
    const skip = pauseChange(schedule({ paused: true }), false, true);
    const t = schedule({ paused: true });
    if (skip.change) skip.apply(t);
    expect(t.spec).toMatchObject({ paused: false, skipImmediately: true });
    expect(skip.message).toBe('Schedule nightly unpaused successfully');
  });
});

describe('schedule describe', () => {
  it("has Velero's sections, the template indented under Backup Template", () => {
    const text = describeSchedule(schedule({}, { phase: 'Enabled', lastBackup: '2026-03-02T01:00:04Z' }), colours(false));
    const lines = text.split('\n');
    expect(lines.slice(0, 6)).toEqual(['Name:         nightly', 'Namespace:    velero', 'Labels:       <none>', 'Annotations:  <none>', '', 'Phase:  Enabled']);
    expect(text).toContain('\nPaused:  false\n');
    expect(text).toContain('\nSchedule:  0 1 * * *\n\nBackup Template:\n  Namespaces:\n    Included:  *\n');
    expect(text).toContain('  Label selector:  app=web');
    expect(text).toContain('  TTL:  72h0m0s');
    expect(text).toMatch(/Last Backup:\s+2026-03-02 01:00:04 \+0000 UTC/);
  });

  it('shows validation errors and <never> before the first backup', () => {
    const text = describeSchedule(schedule({ schedule: 'bad' }, { phase: 'FailedValidation', validationErrors: ['invalid schedule: one', 'two'] }), colours(false));
    expect(text).toContain('Phase:  FailedValidation');
    expect(text).toMatch(/Validation errors:\s+invalid schedule: one\n\s+two/);
    expect(text).toMatch(/Last Backup:\s+<never>/);
  });
});
