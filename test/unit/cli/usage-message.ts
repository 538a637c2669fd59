import { expect } from 'vitest';
import { UsageError } from '../../../src/base/errors.js';

/** The message of the UsageError `fn` throws; fails the test when it throws anything else or nothing. */
export function usageMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a UsageError');
}
