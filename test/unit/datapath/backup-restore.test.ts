import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, linkSync, lstatSync, mkdirSync, openSync, closeSync, writeSync, symlinkSync, utimesSync, writeFileSync, chmodSync, ftruncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backup } from '../../../src/datapath/uploader.js';
import { restore } from '../../../src/datapath/restorer.js';
import { cleanupTempDirs, describeTree, newRepo, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

function makeSource(): string {
  const src = tempDir('src');
  mkdirSync(join(src, 'a/b/c'), { recursive: true });
  mkdirSync(join(src, 'empty-dir'));
  writeFileSync(join(src, 'empty.txt'), '');
  writeFileSync(join(src, 'tiny.txt'), 'hello\n');
  writeFileSync(join(src, 'a/text.txt'), 'line of text that compresses well\n'.repeat(5000));
  writeFileSync(join(src, 'a/b/random.bin'), randomBytes(3 * 1024 * 1024 + 17));
  writeFileSync(join(src, 'a/b/c/mode.txt'), 'private');
  chmodSync(join(src, 'a/b/c/mode.txt'), 0o640);
  utimesSync(join(src, 'a/b/c/mode.txt'), new Date('2020-01-02T03:04:05Z'), new Date('2020-01-02T03:04:05Z'));
  // Modes the umask would strip, and a setuid bit: restored exactly.
  writeFileSync(join(src, 'a/open.sh'), '#!/bin/sh\n');
  chmodSync(join(src, 'a/open.sh'), 0o777);
  writeFileSync(join(src, 'a/setuid'), 'x');
  chmodSync(join(src, 'a/setuid'), 0o4755);
  symlinkSync('../tiny.txt', join(src, 'a/link'));
  writeFileSync(join(src, 'a/hard1'), randomBytes(5000));
  linkSync(join(src, 'a/hard1'), join(src, 'a/b/hard2'));
  // Sparse: 24 MiB with 64 KiB of data at 12 MiB.
  const fd = openSync(join(src, 'sparse.img'), 'w');
  ftruncateSync(fd, 24 << 20);
  writeSync(fd, randomBytes(64 * 1024), 0, 64 * 1024, 12 << 20);
  closeSync(fd);
  execFileSync('mkfifo', [join(src, 'a/fifo')]);
  return src;
}

describe('backup and restore', () => {
  it('round-trips files, directories, symlinks, hard links, modes, times and sparse files', async () => {
    const repo = await newRepo();
    const src = makeSource();
    const result = await backup({ source: src, repository: repo });
    expect(result.snapshotId).toMatch(/^[0-9a-f]{64}$/);
    expect(result.errors).toEqual([]);
    expect(result.skipped).toEqual([{ path: 'a/fifo', reason: 'FIFO not backed up' }]);
    expect(result.stats.dirs).toBe(4); // a, a/b, a/b/c, empty-dir (the root is not counted)

    const dst = tempDir('dst');
    const restored = await restore({ repository: repo, snapshotId: result.snapshotId, target: dst });
    expect(restored.errors).toEqual([]);
    const want = describeTree(src);
    delete want['a/fifo'];
    expect(describeTree(dst)).toEqual(want);
    expect(lstatSync(join(dst, 'a/hard1')).ino).toBe(lstatSync(join(dst, 'a/b/hard2')).ino);
    const sparse = statSync(join(dst, 'sparse.img'));
    expect(sparse.size).toBe(24 << 20);
    expect(sparse.blocks * 512).toBeLessThan(4 << 20);
  });

  it('reuses unchanged files from the parent and reads only changed ones', async () => {
    const repo = await newRepo();
    const src = makeSource();
    const first = await backup({ source: src, repository: repo });
    expect(first.stats.newFiles).toBeGreaterThan(5);
    const second = await backup({ source: src, repository: repo });
    expect(second.parent).toBe(first.snapshotId);
    expect(second.stats.newFiles).toBe(0);
    expect(second.stats.newBytes).toBe(0);
    expect(second.stats.unchangedFiles).toBe(second.stats.files - 1); // the symlink counts as a file but is not "unchanged"
    appendFileSync(join(src, 'a/text.txt'), 'one more line\n');
    const third = await backup({ source: src, repository: repo });
    expect(third.stats.newFiles).toBe(1);
    const dst = tempDir('dst');
    await restore({ repository: repo, snapshotId: third.snapshotId, target: dst });
    const want = describeTree(src);
    delete want['a/fifo'];
    expect(describeTree(dst)).toEqual(want);
  });

  it('restores a sub-path into the target', async () => {
    const repo = await newRepo();
    const src = makeSource();
    const { snapshotId } = await backup({ source: src, repository: repo });
    const dst = tempDir('dst');
    const r = await restore({ repository: repo, snapshotId: snapshotId.slice(0, 10), target: dst, path: 'a/b' });
    expect(r.errors).toEqual([]);
    const want = describeTree(join(src, 'a/b'));
    expect(describeTree(dst)).toEqual(want);
  });

  it('honours exclude patterns', async () => {
    const repo = await newRepo();
    const src = makeSource();
    const { snapshotId } = await backup({ source: src, repository: repo, excludes: ['*.bin', 'a/b/c'] });
    const dst = tempDir('dst');
    await restore({ repository: repo, snapshotId, target: dst });
    const got = describeTree(dst);
    expect(got['a/b/random.bin']).toBeUndefined();
    expect(got['a/b/c']).toBeUndefined();
    expect(got['a/text.txt']).toBeDefined();
  });

  it('deduplicates identical content', async () => {
    const repo = await newRepo();
    const src = tempDir('src');
    const data = randomBytes(2 * 1024 * 1024);
    writeFileSync(join(src, 'one'), data);
    writeFileSync(join(src, 'two'), data);
    const r = await backup({ source: src, repository: repo });
    expect(r.stats.newBytes).toBe(data.length);
    expect(r.stats.storedBytes).toBeLessThan(data.length * 1.05);
  });
});
