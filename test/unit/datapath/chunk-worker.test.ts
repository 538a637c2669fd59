import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../../../src/datapath/errors.js';
import { restore } from '../../../src/datapath/restorer.js';
import { backup, WORKER_CHUNK_MIN } from '../../../src/datapath/uploader.js';
import { cleanupTempDirs, describeTree, newRepo, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

/** Large files of several kinds: random, a long run of zeros inside random data, a highly repetitive one. */
function largeFiles(): string {
  const src = tempDir('large');
  writeFileSync(join(src, 'random.bin'), randomBytes(21 * 1024 * 1024 + 5));
  // 20 MiB of zeros between random data: cuts far apart (no cut for longer than a segment) and a hole.
  writeFileSync(join(src, 'zero-run.bin'), Buffer.concat([randomBytes(3 << 20), Buffer.alloc(20 << 20), randomBytes(1234567)]));
  writeFileSync(join(src, 'repeated.txt'), 'a line of text that repeats for a while\n'.repeat(300_000));
  writeFileSync(join(src, 'threshold.bin'), randomBytes(WORKER_CHUNK_MIN));
  writeFileSync(join(src, 'small.txt'), 'small\n');
  return src;
}

/**
 * Backs `src` up on the main thread, then again into the same repository on the chunk worker, and checks the worker
 * cut the very same chunks (nothing new stored the second time) and wrote the very same directory listing.
 */
async function backUpOnMainThenWorker(src: string) {
  const repo = await newRepo();
  const onMain = await backup({ source: src, repository: repo, parent: null, workers: 0 });
  const onWorker = await backup({ source: src, repository: repo, parent: null, workers: 1 });
  expect(onWorker.stats.newBytes).toBe(0);
  expect((await repo.snapshots.find(onWorker.snapshotId)).tree).toEqual((await repo.snapshots.find(onMain.snapshotId)).tree);
  return { repo, onMain, onWorker };
}

describe('large files on the chunk worker', () => {
  it('cut and name chunks exactly as the main thread does, and restore byte for byte', async () => {
    const src = largeFiles();
    const { repo, onMain, onWorker } = await backUpOnMainThenWorker(src);
    expect(onWorker.stats.bytes).toBe(onMain.stats.bytes);

    const target = tempDir('large-restore');
    const r = await restore({ repository: repo, snapshotId: onWorker.snapshotId, target });
    expect(r.errors).toEqual([]);
    for (const name of ['random.bin', 'zero-run.bin', 'repeated.txt', 'threshold.bin', 'small.txt']) {
      expect(readFileSync(join(target, name)).equals(readFileSync(join(src, name))), name).toBe(true);
    }
  });

  it('stops with CancelledError in the middle of a large file, and the next backup works', async () => {
    const src = largeFiles();
    const repo = await newRepo();
    const ac = new AbortController();
    const run = backup({
      source: src,
      repository: repo,
      workers: 1,
      signal: ac.signal,
      progressIntervalMs: 0,
      onProgress: (p) => {
        if (p.doneBytes > 6 << 20) ac.abort();
      },
    });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    const again = await backup({ source: src, repository: repo, workers: 1 });
    const target = tempDir('large-restore');
    await restore({ repository: repo, snapshotId: again.snapshotId, target });
    expect(readFileSync(join(target, 'zero-run.bin')).equals(readFileSync(join(src, 'zero-run.bin')))).toBe(true);
  });

  it('keep listings in name order while the walk goes on past large files into other directories', async () => {
    // Large files queued for the worker in several directories, with small files and subdirectories after them: the
    // walk visits those while the worker reads, and every listing must come out as a walk on one thread writes it.
    const src = tempDir('interleaved');
    for (const dir of ['a', 'a/b', 'c', 'c/d/e']) mkdirSync(join(src, dir), { recursive: true });
    for (let i = 0; i < 10; i++) writeFileSync(join(src, 'a', `big${i}.bin`), randomBytes(WORKER_CHUNK_MIN + i * 4099));
    for (let i = 0; i < 300; i++) writeFileSync(join(src, 'a/b', `s${i}.txt`), `small file ${i}\n`.repeat(1 + (i % 40)));
    writeFileSync(join(src, 'a', 'zz-after.txt'), 'after the large files\n'.repeat(30));
    writeFileSync(join(src, 'c/d/e', 'deep.bin'), randomBytes(WORKER_CHUNK_MIN + 1));
    for (let i = 0; i < 200; i++) writeFileSync(join(src, 'c', `t${i}.txt`), `text ${i}\n`.repeat(2 + (i % 30)));
    writeFileSync(join(src, 'top.bin'), randomBytes(WORKER_CHUNK_MIN * 2));
    const { repo, onMain, onWorker } = await backUpOnMainThenWorker(src);
    expect(onWorker.stats.files).toBe(onMain.stats.files);
    const target = tempDir('interleaved-restore');
    await restore({ repository: repo, snapshotId: onWorker.snapshotId, target });
    expect(describeTree(target)).toEqual(describeTree(src));
  });

  it('store a hard-linked large file once, even with other large files queued before it', async () => {
    const src = tempDir('linked');
    writeFileSync(join(src, 'a-first.bin'), randomBytes(WORKER_CHUNK_MIN + 3));
    writeFileSync(join(src, 'b-linked.bin'), randomBytes(WORKER_CHUNK_MIN * 2 + 5));
    linkSync(join(src, 'b-linked.bin'), join(src, 'c-other-name.bin'));
    writeFileSync(join(src, 'd-last.bin'), randomBytes(WORKER_CHUNK_MIN + 11));
    const repo = await newRepo();
    const result = await backup({ source: src, repository: repo, workers: 1 });
    // The second name is not read again.
    expect(result.stats.newBytes).toBe(WORKER_CHUNK_MIN * 4 + 19);
    const target = tempDir('linked-restore');
    await restore({ repository: repo, snapshotId: result.snapshotId, target });
    expect(describeTree(target)).toEqual(describeTree(src));
    expect(statSync(join(target, 'c-other-name.bin')).ino).toBe(statSync(join(target, 'b-linked.bin')).ino);
  });
});
