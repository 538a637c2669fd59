import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, textLine } from '../../../src/base/logger.js';

function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _e, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

async function flush(): Promise<void> {
  await new Promise((r) => setImmediate(r));
}

describe('logger', () => {
  it('writes JSON lines with --log-format json', async () => {
    const s = sink();
    createLogger({ format: 'json', destination: s.stream }).info({ backup: 'b1' }, 'started');
    await flush();
    const rec = JSON.parse(s.text().trim());
    expect(rec).toMatchObject({ msg: 'started', backup: 'b1', level: 30 });
  });

  it('writes readable text lines by default', async () => {
    const s = sink();
    createLogger({ destination: s.stream }).warn({ backup: 'my backup' }, 'slow');
    await flush();
    expect(s.text()).toMatch(/^\d{4}-\d\d-\d\dT\S+ warn {2}slow backup="my backup"\n$/);
  });

  it('respects the level', async () => {
    const s = sink();
    const log = createLogger({ level: 'warn', destination: s.stream });
    log.info('hidden');
    log.error('shown');
    await flush();
    expect(s.text()).not.toContain('hidden');
    expect(s.text()).toContain('shown');
  });

  it('never prints secret-looking fields', async () => {
    const s = sink();
    createLogger({ format: 'json', destination: s.stream }).info({ password: 'hunter2', creds: { secretAccessKey: 'AKIA-SECRET' } }, 'connect');
    await flush();
    expect(s.text()).not.toContain('hunter2');
    expect(s.text()).not.toContain('AKIA-SECRET');
  });

  it('passes non-JSON lines through unchanged', () => {
    expect(textLine('plain')).toBe('plain');
  });
});
