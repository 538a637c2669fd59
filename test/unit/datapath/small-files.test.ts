import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { backup } from '../../../src/datapath/uploader.js';
import { restore } from '../../../src/datapath/restorer.js';
import { CancelledError } from '../../../src/datapath/errors.js';
import type { Repository } from '../../../src/datapath/repository.js';
import { cleanupTempDirs, describeTree, newRepo, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

/** Many small files over several directories: empty, inline-sized, one chunk, text and random, odd modes and times. */
function manySmallFiles(): string {
  const src = tempDir('small-src');
  for (let d = 0; d < 6; d++) {
    const dir = join(src, `d${d}`, `sub${d % 2}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 70; f++) {
      const size = [0, 1, 100, 256, 257, 3000, 16 * 1024, 200 * 1024][f % 8]!;
      const data = f % 3 === 0 ? randomBytes(size) : Buffer.from('some text that compresses\n'.repeat(Math.ceil(size / 26)).slice(0, size));
      const p = join(dir, `f${f}`);
      writeFileSync(p, data);
      if (f % 5 === 0) chmodSync(p, 0o600);
      if (f % 7 === 0) chmodSync(p, 0o4755);
      if (f % 4 === 0) utimesSync(p, new Date('2019-05-06T07:08:09.5Z'), new Date('2019-05-06T07:08:09.5Z'));
    }
    utimesSync(dir, new Date('2018-01-01T00:00:00Z'), new Date('2018-01-01T00:00:00Z'));
  }
  // A read-only directory with files in it: its mode is set only after its files are written.
  const ro = join(src, 'read-only');
  mkdirSync(ro);
  for (let f = 0; f < 5; f++) writeFileSync(join(ro, `r${f}`), `file ${f}\n`);
  chmodSync(ro, 0o555);
  return src;
}

describe('small files restored in batches on the worker threads', () => {
  it('restores contents, modes, times and directory attributes exactly, like the one-file-at-a-time path', async () => {
    const repo = await newRepo();
    const src = manySmallFiles();
    const { snapshotId } = await backup({ source: src, repository: repo });
    const batched = tempDir('small-dst');
    const r = await restore({ repository: repo, snapshotId, target: batched });
    expect(r.errors).toEqual([]);
    expect(r.stats.files).toBe(6 * 70 + 5);
    expect(describeTree(batched)).toEqual(describeTree(src));
    expect(lstatSync(join(batched, 'd0/sub0/f0')).mtime.toISOString()).toBe('2019-05-06T07:08:09.500Z');
    // Every file's time is right to the microsecond (a double of seconds cannot carry nanoseconds).
    for (const rel of ['d0/sub0/f1', 'd3/sub1/f9', 'read-only/r2']) {
      expect(lstatSync(join(batched, rel), { bigint: true }).mtimeNs / 1000n).toBe(lstatSync(join(src, rel), { bigint: true }).mtimeNs / 1000n);
    }
    expect(lstatSync(join(batched, 'read-only')).mode & 0o777).toBe(0o555);
    // No temp files left behind anywhere.
    const leftovers = readdirSync(batched, { recursive: true }).filter((n) => String(n).endsWith('.cairn-restore'));
    expect(leftovers).toEqual([]);

    const oneByOne = tempDir('small-dst0');
    const r0 = await restore({ repository: repo, snapshotId, target: oneByOne, workers: 0 });
    expect(r0.errors).toEqual([]);
    expect(describeTree(oneByOne)).toEqual(describeTree(batched));
    chmodSync(join(src, 'read-only'), 0o755);
    chmodSync(join(batched, 'read-only'), 0o755);
    chmodSync(join(oneByOne, 'read-only'), 0o755);
  });

  it('reports a file whose target cannot be written and restores the rest', async () => {
    const repo = await newRepo();
    const src = tempDir('small-src2');
    mkdirSync(join(src, 'a'));
    for (let f = 0; f < 20; f++) writeFileSync(join(src, 'a', `f${f}`), `content ${f}\n`.repeat(50));
    const { snapshotId } = await backup({ source: src, repository: repo });
    const dst = tempDir('small-dst2');
    // A directory where a file should go: the rename onto it fails for that file only.
    mkdirSync(join(dst, 'a/f3'), { recursive: true });
    writeFileSync(join(dst, 'a/f3/keep'), 'x');
    const r = await restore({ repository: repo, snapshotId, target: dst });
    expect(r.errors.map((e) => e.path)).toEqual(['a/f3']);
    expect(r.errors[0]!.reason).toMatch(/^E(ISDIR|NOTEMPTY|EXIST)/);
    expect(r.stats.files).toBe(19);
    expect(readdirSync(join(dst, 'a')).filter((n) => n.endsWith('.cairn-restore'))).toEqual([]);
  });

  it('restores one large directory and many small ones completely (batches end at directories, one worker per directory when it can)', async () => {
    const repo = await newRepo();
    const src = tempDir('small-src4');
    mkdirSync(join(src, 'big'));
    for (let f = 0; f < 700; f++) writeFileSync(join(src, 'big', `f${f}`), `big ${f}\n`.repeat(f % 40));
    for (let d = 0; d < 30; d++) {
      mkdirSync(join(src, `s${d}`));
      for (let f = 0; f < 1 + (d % 45); f++) writeFileSync(join(src, `s${d}`, `f${f}`), `small ${d}/${f}\n`.repeat(20));
    }
    const { snapshotId } = await backup({ source: src, repository: repo });
    const dst = tempDir('small-dst4');
    const r = await restore({ repository: repo, snapshotId, target: dst, workers: 2 });
    expect(r.errors).toEqual([]);
    expect(describeTree(dst)).toEqual(describeTree(src));
  });

  it('completes when the small files read more than the read budget holds (a group is split to fit, not left waiting on itself)', async () => {
    const repo = await newRepo();
    const src = tempDir('small-src5');
    for (let d = 0; d < 3; d++) {
      mkdirSync(join(src, `d${d}`));
      for (let f = 0; f < 8; f++) writeFileSync(join(src, `d${d}`, `r${f}`), randomBytes(300 * 1024));
      for (let f = 0; f < 50; f++) writeFileSync(join(src, `d${d}`, `t${f}`), `tiny ${d}/${f}\n`);
    }
    const { snapshotId } = await backup({ source: src, repository: repo });
    // 7 MB of small files in one group, read with two or more requests: far more than a 256 KiB budget.
    await restoresWithin(repo, snapshotId, src, 256 * 1024);
  });

  it('completes when large files and small-file groups share a read budget smaller than one large read', async () => {
    const repo = await newRepo();
    const src = tempDir('small-src6');
    // Small and large files in turn: the small files' blobs lie apart in the packs, so a group of them is read with
    // several requests, and the large files' reads (each taking the whole budget) queue between those requests.
    for (let f = 0; f < 40; f++) {
      writeFileSync(join(src, `f${String(f).padStart(2, '0')}a`), randomBytes(100 * 1024));
      writeFileSync(join(src, `f${String(f).padStart(2, '0')}b`), randomBytes(1536 * 1024));
    }
    const { snapshotId } = await backup({ source: src, repository: repo });
    for (let run = 0; run < 3; run++) await restoresWithin(repo, snapshotId, src, 512 * 1024);
  });
});

/** Restores the snapshot under a read budget of `budget` bytes: it must end within 30 s, whole and without errors. */
async function restoresWithin(repo: Repository, snapshotId: string, src: string, budget: number): Promise<void> {
  const dst = tempDir('small-dst-budget');
  const restoring = restore({ repository: repo, snapshotId, target: dst, readBudgetBytes: budget });
  const outcome = await Promise.race([restoring.then(() => 'done'), delay(30_000).then(() => 'still waiting after 30 s')]);
  expect(outcome).toBe('done');
  const r = await restoring;
  expect(r.errors).toEqual([]);
  expect(describeTree(dst)).toEqual(describeTree(src));
}

describe('cancelling a restore of many small files', () => {
  it('stops with CancelledError and leaves no temp files behind', async () => {
    const repo = await newRepo();
    const src = tempDir('small-src3');
    for (let d = 0; d < 20; d++) {
      mkdirSync(join(src, `d${d}`));
      for (let f = 0; f < 100; f++) writeFileSync(join(src, `d${d}`, `f${f}`), `file ${d}/${f}\n`.repeat(30));
    }
    const { snapshotId } = await backup({ source: src, repository: repo });
    const dst = tempDir('small-dst3');
    const ac = new AbortController();
    const run = restore({ repository: repo, snapshotId, target: dst, signal: ac.signal, progressIntervalMs: 0, onProgress: (p) => p.doneFiles >= 150 && ac.abort() });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    const leftovers = readdirSync(dst, { recursive: true }).filter((n) => String(n).endsWith('.cairn-restore'));
    expect(leftovers).toEqual([]);
  });
});
