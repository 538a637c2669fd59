/**
 * Go time.Duration strings, as Velero stores metav1.Duration fields (ttl "720h0m0s", csiSnapshotTimeout "10m0s",
 * maintenanceFrequency "1h0m0s"). Parsing accepts what Go's time.ParseDuration accepts; formatting prints what Go's
 * Duration.String() prints, so a value read from a Velero object and written back is unchanged.
 *
 * Durations are exchanged as milliseconds (a JS number, fractional below 1 ms) because that is what timers and
 * Date arithmetic use; internally the exact value is kept in integer nanoseconds.
 */

const NANOS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5 micro sign
  'μs': 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const MAX_NANOS = (1n << 63n) - 1n; // Go's Duration is an int64 of nanoseconds
const COMPONENT = /^(\d*)(?:\.(\d*))?([a-zµμ]+)/;

export class InvalidDurationError extends Error {
  constructor(readonly text: string) {
    super(`invalid duration "${text}": expected a duration like "720h0m0s", "30m" or "1h30m"`);
    this.name = 'InvalidDurationError';
  }
}

/** Exact value in nanoseconds, or undefined when `text` is not a Go duration. */
export function parseDurationNanos(text: string): bigint | undefined {
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return undefined;
  let total = 0n;
  while (rest !== '') {
    const m = COMPONENT.exec(rest);
    if (!m) return undefined;
    const [whole, intPart = '', fracPart, unit = ''] = m;
    if (intPart === '' && (fracPart === undefined || fracPart === '')) return undefined; // "h", ".h"
    const perUnit = NANOS_PER_UNIT[unit];
    if (perUnit === undefined) return undefined;
    total += BigInt(intPart || '0') * perUnit;
    if (fracPart) total += (BigInt(fracPart) * perUnit) / 10n ** BigInt(fracPart.length);
    if (total > MAX_NANOS + (negative ? 1n : 0n)) return undefined;
    rest = rest.slice(whole.length);
  }
  return negative ? -total : total;
}

/** True when `text` parses as a Go duration. */
export function isGoDuration(text: string): boolean {
  return parseDurationNanos(text) !== undefined;
}

/** Milliseconds in a Go duration string; throws InvalidDurationError for anything Go would reject. */
export function parseDuration(text: string): number {
  const nanos = parseDurationNanos(text);
  if (nanos === undefined) throw new InvalidDurationError(text);
  return Number(nanos) / 1e6;
}

/** Go's Duration.String() for a number of milliseconds: 2592000000 → "720h0m0s", 1.5 → "1.5ms", 0 → "0s". */
export function formatDuration(milliseconds: number): string {
  if (!Number.isFinite(milliseconds)) throw new RangeError(`cannot format ${milliseconds} ms as a duration`);
  return formatDurationNanos(BigInt(Math.round(milliseconds * 1e6)));
}

/** Go's Duration.String() for an exact number of nanoseconds. */
export function formatDurationNanos(nanos: bigint): string {
  if (nanos === 0n) return '0s';
  const sign = nanos < 0n ? '-' : '';
  const abs = nanos < 0n ? -nanos : nanos;
  if (abs < 1_000_000_000n) {
    // Below one second Go picks the largest unit that keeps an integer part: ns, µs or ms.
    if (abs < 1_000n) return `${sign}${abs}ns`;
    if (abs < 1_000_000n) return `${sign}${decimal(abs, 1_000n)}µs`;
    return `${sign}${decimal(abs, 1_000_000n)}ms`;
  }
  const hours = abs / 3_600_000_000_000n;
  const minutes = (abs / 60_000_000_000n) % 60n;
  const seconds = decimal(abs % 60_000_000_000n, 1_000_000_000n);
  if (hours > 0n) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

/** `value / unit` printed with the fraction trimmed of trailing zeros (Go's fmtFrac). */
function decimal(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const frac = value % unit;
  if (frac === 0n) return whole.toString();
  const digits = unit.toString().length - 1;
  return `${whole}.${frac.toString().padStart(digits, '0').replace(/0+$/, '')}`;
}
