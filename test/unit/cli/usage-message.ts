import { UsageError } from '../../../src/base/errors.js';
import { expectThrown } from '../../support/thrown.js';

/** The message of the UsageError `fn` throws; fails the test when it throws anything else or nothing. */
export const usageMessage = (fn: () => unknown): string => expectThrown(UsageError, fn).message;
