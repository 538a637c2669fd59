/**
 * A Schedule's `spec.schedule`, with the syntax Velero accepts (robfig/cron's standard parser):
 *   - five fields: minute, hour, day of month, month, day of week (names such as MON and JAN, `*`, `?`, ranges,
 *     lists and steps); evaluated in UTC unless a time zone is given;
 *   - descriptors: `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily` (`@midnight`), `@hourly`;
 *   - `@every <Go duration>`: a constant interval from the previous run, whole seconds, at least 1s;
 *   - an optional `CRON_TZ=<zone> ` or `TZ=<zone> ` prefix (IANA zone name) for the five-field and descriptor forms.
 * The calendar arithmetic is cron-parser's; this module only translates Velero's dialect into it and refuses what
 * Velero would refuse (six fields, the Quartz extensions `L`, `W`, `#`, `H`), so a Schedule written for cairn also
 * runs under Velero.
 */
import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { parseDurationNanos } from './duration.js';

/** When a parsed schedule fires. */
export interface CronSchedule {
  /** The original text. */
  readonly text: string;
  /** The first activation strictly after `after` (whole seconds). */
  next(after: Date): Date;
  /**
   * The latest activation of the run that follows `base` and is not after `now`: the slot that is due. With a
   * constant interval the slots are `base + k·interval`; with a calendar they are the calendar's times.
   */
  latestDue(base: Date, now: Date): Date;
}

export type CronParseResult = { ok: true; schedule: CronSchedule } | { ok: false; error: string };

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const FIELD_NAMES = ['minute', 'hour', 'day of month', 'month', 'day of week'] as const;
/** Characters a field may have: digits, names, `*`, `?`, `,`, `-`, `/` (and `#`, refused below with a reason). */
const FIELD_TEXT = /^[0-9A-Za-z*?,/#-]+$/;
/** Quartz extensions cron-parser knows and Velero does not. */
const QUARTZ = /[LW#H]/;
const MONTH_OR_DAY_NAME = /^(JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|SUN|MON|TUE|WED|THU|FRI|SAT)$/i;

function fail(error: string): CronParseResult {
  return { ok: false, error };
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Parses `spec.schedule`; the error says what is wrong in words a user can act on. */
export function parseCronSchedule(text: string): CronParseResult {
  let spec = text.trim();
  if (spec === '') return fail('Schedule must be a non-empty valid Cron expression');
  let zone: string | undefined;
  const prefix = /^(CRON_TZ|TZ)=(\S*)(\s+|$)/.exec(spec);
  if (prefix) {
    zone = prefix[2] ?? '';
    if (!zone || !validZone(zone)) return fail(`invalid schedule: unknown time zone "${zone}" in ${prefix[1]}=`);
    spec = spec.slice(prefix[0].length).trim();
    if (spec === '') return fail(`invalid schedule: nothing after ${prefix[1]}=${zone}`);
  }
  if (spec.startsWith('@every')) {
    const rest = spec.slice('@every'.length).trim();
    if (!/^@every\s/.test(spec) || rest === '') return fail(`invalid schedule: "@every" needs a duration, e.g. "@every 6h"`);
    const nanos = parseDurationNanos(rest);
    if (nanos === undefined || nanos < 0n) return fail(`invalid schedule: "${rest}" in "@every ${rest}" is not a duration such as 6h or 1h30m`);
    return { ok: true, schedule: everySchedule(text, nanos) };
  }
  if (spec.startsWith('@')) {
    const expanded = DESCRIPTORS[spec.toLowerCase()];
    if (!expanded) return fail(`invalid schedule: unknown descriptor "${spec}" (known: ${[...Object.keys(DESCRIPTORS), '@every <duration>'].join(', ')})`);
    spec = expanded;
  }
  const fields = spec.split(/\s+/);
  if (fields.length !== 5) {
    return fail(`invalid schedule: expected exactly 5 fields (minute hour day-of-month month day-of-week), found ${fields.length}: "${spec}"`);
  }
  for (const [i, field] of fields.entries()) {
    const name = FIELD_NAMES[i] as string;
    if (!FIELD_TEXT.test(field)) return fail(`invalid schedule: the ${name} field "${field}" has characters a cron field cannot have`);
    const words = field.split(/[,/-]/).filter((w) => /[A-Za-z]/.test(w));
    if (field.includes('#') || (QUARTZ.test(field.toUpperCase()) && !words.every((w) => MONTH_OR_DAY_NAME.test(w)))) {
      return fail(`invalid schedule: the ${name} field "${field}" uses an extension (L, W, # or H) that Velero's cron syntax does not have`);
    }
  }
  try {
    // Parse once now so a bad range or value is reported at validation, not at the first run.
    CronExpressionParser.parse(spec, { currentDate: new Date(0), tz: zone ?? 'UTC' }).next();
  } catch (err) {
    return fail(`invalid schedule: ${(err as Error).message}`);
  }
  return { ok: true, schedule: calendarSchedule(text, spec, zone ?? 'UTC') };
}

function calendarSchedule(text: string, spec: string, zone: string): CronSchedule {
  const at = (date: Date): CronExpression => CronExpressionParser.parse(spec, { currentDate: date, tz: zone });
  const next = (after: Date) => at(after).next().toDate();
  return {
    text,
    next,
    latestDue(base, now) {
      // The previous activation at or before `now` (prev() is strictly before, so start a millisecond later).
      const latest = at(new Date(now.getTime() + 1)).prev().toDate();
      return latest.getTime() > base.getTime() ? latest : next(base);
    },
  };
}

function everySchedule(text: string, nanos: bigint): CronSchedule {
  // robfig/cron: at least one second, rounded down to whole seconds.
  const seconds = nanos < 1_000_000_000n ? 1 : Number(nanos / 1_000_000_000n);
  const intervalMs = seconds * 1000;
  /** The next run is `interval` after the given time, taken at its whole second. */
  const next = (after: Date) => new Date(Math.floor(after.getTime() / 1000) * 1000 + intervalMs);
  return {
    text,
    next,
    latestDue(base, now) {
      const first = next(base).getTime();
      if (now.getTime() <= first) return new Date(first);
      return new Date(first + Math.floor((now.getTime() - first) / intervalMs) * intervalMs);
    },
  };
}
