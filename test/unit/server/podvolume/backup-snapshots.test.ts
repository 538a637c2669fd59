import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backup } from '../../../../src/datapath/uploader.js';
import { cleanupTempDirs, newRepo, tempDir } from '../../datapath/helpers.js';

afterAll(cleanupTempDirs);

describe('deleting a pod-volume snapshot from its repository', () => {
  it('forgets the snapshot, keeps the others, and says when there was nothing to delete', async () => {
    const repository = await newRepo();
    const src = tempDir('pv-src');
    writeFileSync(join(src, 'a.txt'), 'first\n');
    const first = (await backup({ source: src, repository })).snapshotId;
    writeFileSync(join(src, 'b.txt'), 'second\n');
    const second = (await backup({ source: src, repository })).snapshotId;

    expect(await repository.snapshots.delete(first)).toBe(true);
    expect((await repository.snapshots.list()).map((s) => s.id)).toEqual([second]);
    expect(await repository.snapshots.delete(first)).toBe(false);
    await expect(repository.snapshots.delete('not-an-id')).rejects.toThrow(/invalid snapshot ID/);
  });
});
