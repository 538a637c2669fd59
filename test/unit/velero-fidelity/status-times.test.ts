/**
 * Golden: times cairn writes into Velero objects and stored files are metav1.Time as Go marshals it, RFC 3339 in
 * UTC with whole seconds (the fraction truncated), so `velero backup get` shows `2025-10-01 20:42:13 +0000 UTC`
 * for cairn's backups as for its own, not `20:42:13.332`.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { optionalStatusTime, statusTime } from '../../../src/api/index.js';

describe('statusTime', () => {
  it.each([
    ['2025-10-01T20:42:13.332Z', '2025-10-01T20:42:13Z'],
    ['2025-10-01T20:42:13.999Z', '2025-10-01T20:42:13Z'],
    ['2025-10-01T20:42:13.000Z', '2025-10-01T20:42:13Z'],
    ['1969-12-31T23:59:59.500Z', '1969-12-31T23:59:59Z'],
  ])('%s → %s', (input, expected) => {
    expect(statusTime(new Date(input))).toBe(expected);
  });

  it('leaves a missing time missing and refuses an invalid one', () => {
    expect(optionalStatusTime(undefined)).toBeUndefined();
    expect(() => statusTime(new Date('nope'))).toThrow(RangeError);
  });
});

/** Where a millisecond ISO time is still right: annotations, log and event payloads that no Velero reader parses, a backup name's stamp. */
const NOT_STATUS_TIMES = new Set(['src/api/time.ts', 'src/api/operation-log.ts', 'src/api/schedule-backup.ts', 'src/server/backup/run-claim.ts', 'src/agent/watcher/log-merge.ts', 'src/agent/microservice/block-volume.ts']);

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('every status time goes through statusTime', () => {
  it('no other toISOString() in the server, the node agent or the API types', () => {
    const offenders = ['src/server', 'src/agent', 'src/api']
      .flatMap(tsFiles)
      .filter((f) => !NOT_STATUS_TIMES.has(f))
      .filter((f) => readFileSync(f, 'utf8').includes('.toISOString()'));
    expect(offenders).toEqual([]);
  });
});
