/**
 * Golden: backup and restore logs in storage are logrus text, as Velero writes them (logrus v1.9 TextFormatter,
 * no colours): `time="<RFC 3339>" level=<level> msg=<msg> <sorted fields>`, values quoted as Go's %q unless every
 * character is a letter, digit or one of -._/@^+. The expected lines are what logrus prints for the same entries.
 */
import { describe, expect, it } from 'vitest';
import { formatLogrusLine, goQuote, parseLogrusLine } from '../../../src/api/index.js';
import { createBackupLog } from '../../../src/server/backup/backup-log.js';
import { createRestoreLog } from '../../../src/server/restore/restore-log.js';
import { createLogger } from '../../../src/base/logger.js';

const t = new Date('2025-10-01T10:00:00.123Z');

describe('logrus text lines', () => {
  it.each([
    [{ time: t, level: 'info' as const, msg: 'Setting up backup temp file', fields: { backup: 'velero/b1' } }, 'time="2025-10-01T10:00:00Z" level=info msg="Setting up backup temp file" backup=velero/b1'],
    [{ time: t, level: 'info' as const, msg: 'Done', fields: {} }, 'time="2025-10-01T10:00:00Z" level=info msg=Done'],
    [{ time: t, level: 'warning' as const, msg: '', fields: { a: 'x' } }, 'time="2025-10-01T10:00:00Z" level=warning a=x'],
    [
      { time: t, level: 'error' as const, msg: 'Error backing up item', fields: { error: 'pods "web" is forbidden: "x"\nnext', name: 'web', resource: 'pods', backup: 'velero/b1' } },
      'time="2025-10-01T10:00:00Z" level=error msg="Error backing up item" backup=velero/b1 error="pods \\"web\\" is forbidden: \\"x\\"\\nnext" name=web resource=pods',
    ],
    [{ time: t, level: 'info' as const, msg: 'x', fields: { count: 3, ratio: 1.5, ok: true, empty: '' } }, 'time="2025-10-01T10:00:00Z" level=info msg=x count=3 empty= ok=true ratio=1.5'],
    [{ time: t, level: 'info' as const, msg: 'x', fields: { msg: 'clash', time: 'now', level: 'l' } }, 'time="2025-10-01T10:00:00Z" level=info msg=x fields.level=l fields.msg=clash fields.time=now'],
    [{ time: t, level: 'debug' as const, msg: 'x', fields: { b: '1', B: '2', _a: '3', 'a.b': '4' } }, 'time="2025-10-01T10:00:00Z" level=debug msg=x B=2 _a=3 a.b=4 b=1'],
    [{ time: t, level: 'info' as const, msg: 'path /var/lib@x^y+z-1_2.3', fields: { p: '/var/lib@x^y+z-1_2.3', q: 'a=b', r: 'a:b' } }, 'time="2025-10-01T10:00:00Z" level=info msg="path /var/lib@x^y+z-1_2.3" p=/var/lib@x^y+z-1_2.3 q="a=b" r="a:b"'],
  ])('%#', (entry, line) => {
    expect(formatLogrusLine(entry)).toBe(line);
    const parsed = parseLogrusLine(line);
    expect(parsed?.level).toBe(entry.level);
    expect(parsed?.msg).toBe(entry.msg);
  });

  it("quotes as Go's strconv.Quote does", () => {
    expect(goQuote('héllo wörld 😀 日本')).toBe('"héllo wörld 😀 日本"');
    expect(goQuote('a\u0001b\u007fc')).toBe('"a\\x01b\\x7fc"');
    expect(goQuote('tab\tcr\rbell\u0007vt\u000bff\f bs\b')).toBe('"tab\\tcr\\rbell\\avt\\vff\\f bs\\b"');
    expect(goQuote('nbsp\u00a0zwsp\u200b')).toBe('"nbsp\\u00a0zwsp\\u200b"');
    expect(goQuote('\u{e0001}')).toBe('"\\U000e0001"');
    expect(goQuote('back\\slash')).toBe('"back\\\\slash"');
  });

  it('parses what it writes, and refuses lines that are not logrus text', () => {
    const line = formatLogrusLine({ time: t, level: 'error', msg: 'a "b"\n', fields: { k: 'v w', z: '😀' } });
    expect(parseLogrusLine(line)).toEqual({ time: '2025-10-01T10:00:00Z', level: 'error', msg: 'a "b"\n', fields: { k: 'v w', z: '😀' } });
    expect(parseLogrusLine('2025-10-01T10:00:00.000Z info  Backing up item')).toBeUndefined();
    expect(parseLogrusLine('level=info time="x"')).toBeUndefined();
    expect(parseLogrusLine('time="x" level=info msg="unterminated')).toBeUndefined();
  });
});

describe('the backup and restore logs write logrus lines', () => {
  it('backup: level=warning for warn, error= from err, backup=<ns>/<name> on every line', () => {
    const log = createBackupLog({ backup: 'velero/b1' });
    log.logger.info({ resource: 'pods', namespace: 'app', name: 'web' }, 'Backing up item');
    log.logger.info({ volumes: ['data', 'scratch'], sizes: { b: 2, a: 1 } }, 'pod volumes');
    log.logger.warn('Volume data not included');
    log.logger.error({ err: new Error('connection refused') }, 'Error uploading log file');
    const lines = log.text().trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^time="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ" level=info msg="Backing up item" backup=velero\/b1 name=web namespace=app resource=pods$/);
    // Lists and maps as Go's fmt.Sprint prints them.
    expect(lines.splice(1, 1)[0]).toMatch(/ msg="pod volumes" backup=velero\/b1 sizes="map\[a:1 b:2\]" volumes="\[data scratch\]"$/);
    expect(lines[1]).toMatch(/^time="[^"]+" level=warning msg="Volume data not included" backup=velero\/b1$/);
    expect(lines[2]).toMatch(/^time="[^"]+" level=error msg="Error uploading log file" backup=velero\/b1 error="connection refused"$/);
    for (const l of lines) expect(parseLogrusLine(l)?.fields.backup).toBe('velero/b1');
  });

  it('restore: restore=<ns>/<name>', () => {
    const log = createRestoreLog({ restore: 'velero/r1', server: createLogger({ level: 'fatal' }) });
    log.logger.info({ resource: 'pods', items: 2 }, "Restoring resource 'pods'");
    expect(log.text()).toMatch(/^time="[^"]+" level=info msg="Restoring resource 'pods'" items=2 resource=pods restore=velero\/r1\n$/);
  });
});
