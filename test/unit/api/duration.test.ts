import { describe, expect, it } from 'vitest';
import {
  InvalidDurationError,
  formatDuration,
  formatDurationNanos,
  isGoDuration,
  parseDuration,
  parseDurationNanos,
} from '../../../src/api/index.js';

const HOUR = 3_600_000;

describe('Go durations', () => {
  it.each([
    ['720h0m0s', 720 * HOUR],
    ['720h', 720 * HOUR],
    ['30m', 30 * 60_000],
    ['1h30m', 1.5 * HOUR],
    ['10m0s', 600_000],
    ['4h0m0s', 4 * HOUR],
    ['1.5h', 1.5 * HOUR],
    ['.5s', 500],
    ['1.s', 1000],
    ['300ms', 300],
    ['2us', 0.002],
    ['2µs', 0.002],
    ['2μs', 0.002],
    ['15ns', 0.000015],
    ['0', 0],
    ['0s', 0],
    ['-1m', -60_000],
    ['+5s', 5000],
    ['1h1h', 2 * HOUR],
  ])('parses %s', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
    expect(isGoDuration(text)).toBe(true);
  });

  it.each(['', '10', '7 days', 'h', '.h', '1d', '1hh', '1h 30m', '-', '1.2.3s', 'ten minutes', '99999999999999h'])(
    'rejects %j as Go does',
    (text) => {
      expect(isGoDuration(text)).toBe(false);
      expect(() => parseDuration(text)).toThrow(InvalidDurationError);
    },
  );

  it('says what it expected', () => {
    expect(() => parseDuration('7 days')).toThrow('invalid duration "7 days": expected a duration like "720h0m0s"');
  });

  it.each([
    [720 * HOUR, '720h0m0s'],
    [30 * 60_000, '30m0s'],
    [1.5 * HOUR, '1h30m0s'],
    [HOUR, '1h0m0s'],
    [60_000, '1m0s'],
    [90_500, '1m30.5s'],
    [30_000, '30s'],
    [1500, '1.5s'],
    [300, '300ms'],
    [1.5, '1.5ms'],
    [0.002, '2µs'],
    [0.000015, '15ns'],
    [0, '0s'],
    [-60_000, '-1m0s'],
  ])('formats %d ms as %s (Go Duration.String)', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('round-trips what Velero writes', () => {
    for (const text of ['720h0m0s', '10m0s', '4h0m0s', '1h0m0s', '168h0m0s', '1m30.5s', '2h45m10.001s']) {
      expect(formatDuration(parseDuration(text))).toBe(text);
    }
  });

  it('keeps nanosecond precision in the exact API', () => {
    expect(parseDurationNanos('1h0m0.000000001s')).toBe(3_600_000_000_001n);
    expect(formatDurationNanos(3_600_000_000_001n)).toBe('1h0m0.000000001s');
    expect(formatDurationNanos(-(1n << 63n))).toBe('-2562047h47m16.854775808s');
  });

  it('refuses to format non-finite values', () => {
    expect(() => formatDuration(Number.NaN)).toThrow(RangeError);
  });
});
