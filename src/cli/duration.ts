import { UsageError } from '../base/errors.js';
import { parseDuration as parseGoDuration } from '../api/duration.js';

/** Parses a Go-style duration flag ("5m", "1h30m", "90s") into milliseconds, naming the flag on error. */
export function parseDuration(flag: string, text: string): number {
  try {
    return parseGoDuration(text);
  } catch {
    throw new UsageError(flag, `"${text}" is not a duration (examples: 90s, 5m, 1h30m)`);
  }
}
