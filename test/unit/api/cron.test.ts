import { describe, expect, it } from 'vitest';
import { parseCronSchedule, type CronSchedule } from '../../../src/api/index.js';

function schedule(text: string): CronSchedule {
  const r = parseCronSchedule(text);
  if (!r.ok) throw new Error(r.error);
  return r.schedule;
}
const at = (iso: string) => new Date(iso);
const iso = (d: Date) => d.toISOString();

describe('parseCronSchedule: what fires when', () => {
  it.each([
    // [expression, after, next]
    ['0 1 * * *', '2026-03-01T00:30:00Z', '2026-03-01T01:00:00.000Z'],
    ['0 1 * * *', '2026-03-01T01:00:00Z', '2026-03-02T01:00:00.000Z'], // strictly after
    ['*/15 * * * *', '2026-03-01T10:07:59Z', '2026-03-01T10:15:00.000Z'],
    ['0 */6 * * *', '2026-03-01T07:00:00Z', '2026-03-01T12:00:00.000Z'],
    ['30 2 * * MON', '2026-03-01T00:00:00Z', '2026-03-02T02:30:00.000Z'], // 2026-03-01 is a Sunday
    ['0 0 1 JAN *', '2026-03-01T00:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['0 0 ? * 0', '2026-03-02T00:00:00Z', '2026-03-08T00:00:00.000Z'],
    ['@hourly', '2026-03-01T10:20:00Z', '2026-03-01T11:00:00.000Z'],
    ['@daily', '2026-03-01T10:20:00Z', '2026-03-02T00:00:00.000Z'],
    ['@midnight', '2026-03-01T10:20:00Z', '2026-03-02T00:00:00.000Z'],
    ['@weekly', '2026-03-02T00:00:00Z', '2026-03-08T00:00:00.000Z'],
    ['@monthly', '2026-03-02T00:00:00Z', '2026-04-01T00:00:00.000Z'],
    ['@yearly', '2026-03-02T00:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['@annually', '2026-03-02T00:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['@every 6h', '2026-03-01T10:20:30.400Z', '2026-03-01T16:20:30.000Z'], // from the whole second
    ['@every 90m', '2026-03-01T10:00:00Z', '2026-03-01T11:30:00.000Z'],
    ['@every 500ms', '2026-03-01T10:00:00Z', '2026-03-01T10:00:01.000Z'], // at least one second
    ['@every 1m30.5s', '2026-03-01T10:00:00Z', '2026-03-01T10:01:30.000Z'], // rounded down to whole seconds
    ['CRON_TZ=Asia/Tokyo 0 1 * * *', '2026-03-01T00:00:00Z', '2026-03-01T16:00:00.000Z'], // 01:00 in Tokyo
    ['TZ=America/New_York 0 2 * * *', '2026-03-01T00:00:00Z', '2026-03-01T07:00:00.000Z'], // EST, UTC-5
    ['TZ=America/New_York 0 2 * * *', '2026-07-01T00:00:00Z', '2026-07-01T06:00:00.000Z'], // EDT, UTC-4
    ['CRON_TZ=Europe/Berlin @daily', '2026-03-01T12:00:00Z', '2026-03-01T23:00:00.000Z'],
  ])('%s after %s fires at %s', (expr, after, next) => {
    expect(iso(schedule(expr).next(at(after)))).toBe(next);
  });

  it.each([
    ['', 'Schedule must be a non-empty valid Cron expression'],
    ['   ', 'Schedule must be a non-empty valid Cron expression'],
    ['0 1 * *', 'expected exactly 5 fields'],
    ['0 0 1 * * *', 'expected exactly 5 fields'], // seconds are not Velero's syntax
    ['61 * * * *', 'invalid schedule: '],
    ['0 25 * * *', 'invalid schedule: '],
    ['*/0 * * * *', 'invalid schedule: '],
    ['5-1 * * * *', 'invalid schedule: '],
    ['0 0 L * *', 'extension (L, W, # or H)'],
    ['0 0 * * 5#3', 'extension (L, W, # or H)'],
    ['0 0 15W * *', 'extension (L, W, # or H)'],
    ['H * * * *', 'extension (L, W, # or H)'],
    ['0 0 * * FOO', 'invalid schedule: '],
    ['0 0 * * !', 'characters a cron field cannot have'],
    ['@fortnightly', 'unknown descriptor "@fortnightly"'],
    ['@every', '"@every" needs a duration'],
    ['@every 2 days', 'is not a duration'],
    ['@every -1h', 'is not a duration'],
    ['CRON_TZ=Mars/Olympus 0 1 * * *', 'unknown time zone "Mars/Olympus"'],
    ['TZ= 0 1 * * *', 'unknown time zone'],
    ['CRON_TZ=UTC', 'nothing after CRON_TZ=UTC'],
    ['not a cron', 'expected exactly 5 fields'],
  ])('%j is refused: %s', (expr, message) => {
    const r = parseCronSchedule(expr);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.error).toContain(message);
  });

  it('accepts day names that contain the letters of the extensions (WED, THU, SAT)', () => {
    expect(iso(schedule('0 0 * * WED,THU,SAT').next(at('2026-03-01T00:00:00Z')))).toBe('2026-03-04T00:00:00.000Z');
  });
});

describe('latestDue: the run a late pass makes', () => {
  it('is the latest calendar activation not after now, when it follows the base', () => {
    const s = schedule('0 * * * *');
    // Down from 10:00 to 13:20: the 11:00, 12:00 and 13:00 runs were missed; one run, named 13:00, is made.
    expect(iso(s.latestDue(at('2026-03-01T10:00:00Z'), at('2026-03-01T13:20:00Z')))).toBe('2026-03-01T13:00:00.000Z');
    expect(iso(s.latestDue(at('2026-03-01T10:00:00Z'), at('2026-03-01T11:00:00Z')))).toBe('2026-03-01T11:00:00.000Z');
  });

  it('is base + k·interval with @every', () => {
    const s = schedule('@every 1h');
    expect(iso(s.latestDue(at('2026-03-01T10:00:10Z'), at('2026-03-01T13:20:00Z')))).toBe('2026-03-01T13:00:10.000Z');
    expect(iso(s.latestDue(at('2026-03-01T10:00:10Z'), at('2026-03-01T11:00:10Z')))).toBe('2026-03-01T11:00:10.000Z');
  });
});
