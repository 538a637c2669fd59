import { describe, expect, it } from 'vitest';
import { roleLogLevel } from '../../../src/cli/base-command.js';

describe('roleLogLevel', () => {
  it('logs the server, node agent and data movers at info when no level is given (the CLI logs at warn)', () => {
    expect(roleLogLevel(undefined)).toBe('info');
  });
  it('keeps every level asked for, warn included', () => {
    for (const l of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) expect(roleLogLevel(l)).toBe(l);
  });
});
