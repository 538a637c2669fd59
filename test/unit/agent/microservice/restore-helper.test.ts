import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completionMarkerPath, writeCompletionMarker } from '../../../../src/agent/microservice/completion-marker.js';
import { runRestoreHelper } from '../../../../src/agent/microservice/restore-helper.js';

describe('restore done markers and the restore-wait helper', () => {
  it('writes .velero/<restore UID> (dir 0755, empty file 0644) and drops markers of earlier restores', () => {
    const vol = mkdtempSync(join(tmpdir(), 'marker-'));
    writeCompletionMarker(vol, 'old-uid');
    writeCompletionMarker(vol, 'uid-1');
    expect(readdirSync(join(vol, '.velero'))).toEqual(['uid-1']);
    expect(statSync(join(vol, '.velero')).mode & 0o777).toBe(0o755);
    const marker = statSync(completionMarkerPath(vol, 'uid-1'));
    expect(marker.size).toBe(0);
    expect(marker.mode & 0o777).toBe(0o644);
  });

  it('waits until every mounted volume has its marker, then removes the .velero directories and returns', async () => {
    const restores = mkdtempSync(join(tmpdir(), 'restores-'));
    mkdirSync(join(restores, 'data'));
    mkdirSync(join(restores, 'cache'));
    writeFileSync(join(restores, 'not-a-volume'), 'x');
    const lines: string[] = [];
    let passes = 0;
    const result = await runRestoreHelper({
      restoreUID: 'uid-1',
      restoresDir: restores,
      print: (l) => lines.push(l),
      // Instead of waiting: the first pause sees the data volume done, the second the cache volume.
      sleep: async () => {
        passes++;
        writeCompletionMarker(join(restores, passes === 1 ? 'data' : 'cache'), 'uid-1');
      },
    });
    expect(result.volumes.sort()).toEqual(['cache', 'data']);
    expect(passes).toBe(2);
    expect(lines).toContain(`The filesystem restore done file ${join(restores, 'cache', '.velero', 'uid-1')} is not found yet. Retry later.`);
    expect(lines).toContain(`Found the done file ${join(restores, 'data', '.velero', 'uid-1')}`);
    const tail = lines.slice(-4);
    expect(tail[0]).toBe('All restic restores are done');
    expect(tail.slice(1, 3).sort()).toEqual([`Deleted ${join(restores, 'cache', '.velero')}`, `Deleted ${join(restores, 'data', '.velero')}`]);
    expect(tail[3]).toBe('Done cleanup .velero folder');
    expect(existsSync(join(restores, 'data', '.velero'))).toBe(false);
    expect(existsSync(join(restores, 'cache', '.velero'))).toBe(false);
  });

  it('a marker of another restore does not count', async () => {
    const restores = mkdtempSync(join(tmpdir(), 'restores-'));
    mkdirSync(join(restores, 'data'));
    writeCompletionMarker(join(restores, 'data'), 'other-uid');
    const abort = new AbortController();
    const lines: string[] = [];
    const run = runRestoreHelper({ restoreUID: 'uid-1', restoresDir: restores, print: (l) => lines.push(l), signal: abort.signal, sleep: async (_ms, signal) => {
      abort.abort(new Error('stop'));
      signal?.throwIfAborted();
    } });
    await expect(run).rejects.toThrow('stop');
    expect(lines[0]).toContain('is not found yet');
  });

  it('waits only for the directories mounted under /restores when the mount table lists them; a stray directory is not a volume', async () => {
    const restores = mkdtempSync(join(tmpdir(), 'restores-'));
    mkdirSync(join(restores, 'data'));
    mkdirSync(join(restores, 'my vol'));
    // A directory nothing is mounted on (left on the node by another pod's mount point, or in the image).
    mkdirSync(join(restores, 'stray'));
    const mountInfo = join(mkdtempSync(join(tmpdir(), 'mountinfo-')), 'mountinfo');
    writeFileSync(
      mountInfo,
      [
        '22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
        `40 22 0:21 /var/lib/kubelet/pods/u/volumes/x/data ${restores}/data rw,relatime - ext4 /dev/sda1 rw`,
        `41 22 0:21 /var/lib/kubelet/pods/u/volumes/x/my\\040vol ${restores}/my\\040vol rw,relatime - ext4 /dev/sda1 rw`,
        `42 40 0:21 /elsewhere ${restores}/data/nested rw,relatime - ext4 /dev/sda1 rw`,
        '',
      ].join('\n'),
    );
    writeCompletionMarker(join(restores, 'data'), 'uid-1');
    writeCompletionMarker(join(restores, 'my vol'), 'uid-1');
    const lines: string[] = [];
    const result = await runRestoreHelper({ restoreUID: 'uid-1', restoresDir: restores, mountInfoPath: mountInfo, print: (l) => lines.push(l), sleep: async () => { throw new Error('should not wait'); } });
    expect(result.volumes.sort()).toEqual(['data', 'my vol']);
    expect(lines.join('\n')).not.toContain('stray');
  });
});
