import { describe, expect, it } from 'vitest';
import { roleLogLevel } from '../../../src/cli/base-command.js';

describe('roleLogLevel', () => {
  it('logs the server, node agent and data movers at info by default (the flag defaults to warn for the CLI)', () => {
    expect(roleLogLevel('warn')).toBe('info');
  });
  it('keeps any other level asked for', () => {
    for (const l of ['trace', 'debug', 'info', 'error', 'fatal'] as const) expect(roleLogLevel(l)).toBe(l);
  });
});
