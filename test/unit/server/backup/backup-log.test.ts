import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/base/logger.js';
import { createBackupLog } from '../../../../src/server/backup/backup-log.js';

describe('the per-backup log', () => {
  it('keeps logrus lines of the backup and mirrors only warnings and errors to the server log', () => {
    const server: string[] = [];
    const serverLogger = createLogger({ format: 'json', destination: new Writable({ write: (c: Buffer, _e, done) => (server.push(c.toString('utf8')), done()) }) });
    const log = createBackupLog({ backup: 'velero/b1', server: serverLogger });
    log.logger.info({ resource: 'pods' }, 'Backing up resource');
    log.logger.warn('something odd');
    log.logger.error({ namespace: 'app' }, 'item failed');
    const lines = log.text().trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^time="\d{4}-\d\d-\d\dT[\d:]+Z" level=info msg="Backing up resource" backup=velero\/b1 resource=pods$/);
    expect(lines[1]).toMatch(/ level=warning msg="something odd" backup=velero\/b1$/);
    expect(lines[2]).toMatch(/ level=error msg="item failed" backup=velero\/b1 namespace=app$/);
    const mirrored = server.map((l) => JSON.parse(l) as { msg: string; backup?: string });
    expect(mirrored.map((m) => m.msg)).toEqual(['something odd', 'item failed']);
    expect(mirrored.every((m) => m.backup === 'velero/b1')).toBe(true);
  });

  it('is empty before anything is logged', () => {
    expect(createBackupLog({ backup: 'velero/b1' }).text()).toBe('');
  });
});
