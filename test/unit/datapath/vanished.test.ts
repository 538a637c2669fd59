/** Files that vanish between listing and reading, or fail to read: reported with path and reason, backup goes on. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const failing = new Map<string, string>();

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const fail = (path: unknown, op: string) => {
    const code = failing.get(`${op}:${String(path)}`);
    if (code) throw Object.assign(new Error(`${code}: injected, ${op} '${String(path)}'`), { code });
  };
  return {
    ...fs,
    lstatSync: ((path: string, options?: object) => {
      fail(path, 'lstat');
      return fs.lstatSync(path, options as never);
    }) as typeof fs.lstatSync,
    openSync: ((path: string, ...rest: unknown[]) => {
      fail(path, 'open');
      return (fs.openSync as (...a: unknown[]) => number)(path, ...rest);
    }) as typeof fs.openSync,
  };
});

const { backup } = await import('../../../src/datapath/uploader.js');
const { restore } = await import('../../../src/datapath/restorer.js');
const { cleanupTempDirs, describeTree, newRepo, tempDir } = await import('./helpers.js');

afterAll(cleanupTempDirs);

describe('files that vanish or cannot be read', () => {
  it('are reported and left out; the rest is backed up', async () => {
    const repo = await newRepo();
    const src = tempDir('src');
    for (const n of ['a.txt', 'gone.txt', 'locked.txt', 'z.txt']) writeFileSync(join(src, n), `content of ${n}\n`.repeat(50));
    failing.set(`lstat:${join(src, 'gone.txt')}`, 'ENOENT');
    failing.set(`open:${join(src, 'locked.txt')}`, 'EACCES');
    // Without worker threads the walk makes every lstat itself, here, where the failures are injected (the scan
    // ahead of the walk runs on a worker thread, which this mock does not reach).
    const result = await backup({ source: src, repository: repo, workers: 0 });
    expect(result.errors).toEqual([
      { path: 'gone.txt', reason: 'vanished during backup' },
      { path: 'locked.txt', reason: 'EACCES: injected' },
    ]);
    expect(result.stats.files).toBe(2);
    const dst = tempDir('dst');
    await restore({ repository: repo, snapshotId: result.snapshotId, target: dst });
    expect(Object.keys(describeTree(dst))).toEqual(['a.txt', 'z.txt']);

    await expect(backup({ source: src, repository: repo, workers: 0, failOnUnreadable: true })).rejects.toThrow('gone.txt: vanished during backup');
    failing.clear();
  });

  it('a large file that cannot be read is reported too, and fails the backup when told to, leaving no snapshot', async () => {
    const { WORKER_CHUNK_MIN } = await import('../../../src/datapath/uploader.js');
    const repo = await newRepo();
    const src = tempDir('src-large');
    writeFileSync(join(src, 'a-big.bin'), Buffer.alloc(WORKER_CHUNK_MIN + 7, 1));
    writeFileSync(join(src, 'b-locked.bin'), Buffer.alloc(WORKER_CHUNK_MIN + 9, 2));
    writeFileSync(join(src, 'c.txt'), 'after the large files\n'.repeat(20));
    failing.set(`open:${join(src, 'b-locked.bin')}`, 'EACCES');
    const result = await backup({ source: src, repository: repo, workers: 1 });
    expect(result.errors).toEqual([{ path: 'b-locked.bin', reason: 'EACCES: injected' }]);
    const dst = tempDir('dst-large');
    await restore({ repository: repo, snapshotId: result.snapshotId, target: dst });
    expect(Object.keys(describeTree(dst))).toEqual(['a-big.bin', 'c.txt']);

    const before = (await repo.snapshots.list()).length;
    await expect(backup({ source: src, repository: repo, parent: null, workers: 1, failOnUnreadable: true })).rejects.toThrow('b-locked.bin: EACCES: injected');
    expect((await repo.snapshots.list()).length).toBe(before);
    failing.clear();
  });
});
