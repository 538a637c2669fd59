import { chmodSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Repository } from '../../../src/datapath/repository.js';
import { backup, type BackupOptions } from '../../../src/datapath/uploader.js';
import { removeExpired } from '../../../src/datapath/listing-cache.js';
import { restore } from '../../../src/datapath/restorer.js';
import { cleanupTempDirs, describeTree, newRepo, reshapeNestedDirs, tempDir, writeNestedDirs } from './helpers.js';

afterAll(cleanupTempDirs);

/** A source of many small directories, with inline, bundled, chunked and large files and symlinks. */
function makeSource(): string {
  const src = tempDir('cache-src');
  writeNestedDirs(src, 12, 3);
  for (let d = 0; d < 12; d++) symlinkSync(`e0/leaf/file.txt`, join(src, `d${d}/link`));
  writeFileSync(join(src, 'd0/medium.bin'), Buffer.alloc(200_000, 7));
  writeFileSync(join(src, 'd1/large.bin'), Buffer.alloc(5 << 20, 9));
  return src;
}

/** Counts the parent listings a backup reads. */
function treeReads(repo: Repository): { count: () => number } {
  const spy = vi.spyOn(repo, 'loadTreeBlob');
  const start = spy.mock.calls.length;
  return { count: () => spy.mock.calls.length - start };
}

async function treeOf(repo: Repository, snapshotId: string): Promise<string[]> {
  return (await repo.snapshots.find(snapshotId)).tree;
}

describe('the listing cache', () => {
  it('stores an unchanged tree as the same listings without reading any of the parent', async () => {
    const repo = await newRepo();
    const src = makeSource();
    const cacheDir = tempDir('cache');
    const first = await backup({ source: src, repository: repo, cacheDir });
    const plain = await backup({ source: src, repository: repo, parent: first.snapshotId });
    const reads = treeReads(repo);
    const cached = await backup({ source: src, repository: repo, parent: first.snapshotId, cacheDir });
    expect(reads.count()).toBe(0);
    expect(first.cachedDirs).toBe(0);
    expect(cached.cachedDirs).toBe(first.stats.dirs + 1); // every directory, the source's own included
    expect(await treeOf(repo, cached.snapshotId)).toEqual(await treeOf(repo, first.snapshotId));
    const { durationMs: _a, ...withCache } = cached.stats;
    const { durationMs: _b, ...without } = plain.stats;
    expect(withCache).toEqual(without);
    expect(cached.stats.unchangedFiles).toBe(first.stats.files - 12); // the symlinks are files but not "unchanged files"
    const files = readdirSync(join(cacheDir, 'listings', repo.config.id));
    expect(files).toHaveLength(1);
    expect(statSync(join(cacheDir, 'listings', repo.config.id, files[0]!)).mode & 0o777).toBe(0o600);
  });

  it('is kept under the key a backup names, so a source seen at another path still finds it', async () => {
    const repo = await newRepo();
    const first = makeSource();
    const cacheDir = tempDir('cache');
    const one = await backup({ source: first, repository: repo, cacheDir, cacheKey: 'ns/pod/volume' });
    // The same volume mounted elsewhere in the next run: its entries lstat the same.
    const second = `${first}-next`;
    renameSync(first, second);
    const reads = treeReads(repo);
    const other = await backup({ source: second, repository: repo, parent: one.snapshotId, cacheDir, cacheKey: 'ns/pod/other' });
    expect(other.cachedDirs).toBe(0);
    expect(reads.count()).toBeGreaterThan(0);
    const same = await backup({ source: second, repository: repo, parent: one.snapshotId, cacheDir, cacheKey: 'ns/pod/volume' });
    expect(same.cachedDirs).toBe(one.stats.dirs + 1);
    expect(await treeOf(repo, same.snapshotId)).toEqual(await treeOf(repo, one.snapshotId));
    renameSync(second, first);
  });

  it('gives the same snapshot as a backup without it after changes of every kind', async () => {
    const repo = await newRepo();
    const src = makeSource();
    const cacheDir = tempDir('cache');
    // Whole seconds, which every file system and a restore keep exactly.
    const mtime = 1_700_000_000;
    utimesSync(join(src, 'd6/e0/tiny'), mtime, mtime);
    await backup({ source: src, repository: repo, cacheDir });
    const parent = await backup({ source: src, repository: repo, cacheDir });
    reshapeNestedDirs(src, { newIn: 'd8', changedIn: 'd9/e2' });
    writeFileSync(join(src, 'd1/large.bin'), Buffer.alloc(5 << 20, 3));
    chmodSync(join(src, 'd10/e0/tiny'), 0o600);
    chmodSync(join(src, 'd11/e1'), 0o700);
    rmSync(join(src, 'd5/link'));
    symlinkSync('e1/tiny', join(src, 'd5/link'));
    // Same size and mtime as before: only ctime tells the change.
    writeFileSync(join(src, 'd6/e0/tiny'), 'XX');
    utimesSync(join(src, 'd6/e0/tiny'), mtime, mtime);
    linkSync(join(src, 'd2/e0/tiny'), join(src, 'd2/e0/hard'));
    const plain = await backup({ source: src, repository: repo, parent: parent.snapshotId });
    const reads = treeReads(repo);
    const cached = await backup({ source: src, repository: repo, parent: parent.snapshotId, cacheDir });
    expect(await treeOf(repo, cached.snapshotId)).toEqual(await treeOf(repo, plain.snapshotId));
    // The second of the two stores nothing new: the first stored it.
    const { durationMs: _a, newBytes: _c, storedBytes: _e, ...withCache } = cached.stats;
    const { durationMs: _b, newBytes: _d, storedBytes: _f, ...without } = plain.stats;
    expect(withCache).toEqual(without);
    // Only the changed directories' listings (and their parents') were read, not the whole tree's.
    expect(reads.count()).toBeGreaterThan(0);
    expect(reads.count()).toBeLessThan(30);
    const dst = tempDir('cache-dst');
    await restore({ repository: repo, snapshotId: cached.snapshotId, target: dst });
    expect(describeTree(dst)).toEqual(describeTree(src));
    // And from that snapshot on, the cache describes the new tree: unchanged, nothing is read but the listing of the
    // directory that holds hard links now, which is walked in full every time.
    const again = treeReads(repo);
    const next = await backup({ source: src, repository: repo, cacheDir });
    expect(again.count()).toBe(1);
    expect(await treeOf(repo, next.snapshotId)).toEqual(await treeOf(repo, cached.snapshotId));
  });

  it('reads the large files that changed ahead of the walk, and stores the same snapshot as without it', async () => {
    const repo = await newRepo();
    const src = makeSource();
    const cacheDir = tempDir('cache');
    // Large files late in the walk, as a database and rotated logs are.
    mkdirSync(join(src, 'd9/var'), { recursive: true });
    writeFileSync(join(src, 'd9/var/db'), Buffer.alloc(6 << 20, 1));
    writeFileSync(join(src, 'd9/var/log.1'), Buffer.alloc(5 << 20, 2));
    writeFileSync(join(src, 'd9/var/log.2'), Buffer.alloc(5 << 20, 3));
    const parent = await backup({ source: src, repository: repo, cacheDir });
    expect(parent.readAheadFiles).toBe(0);
    writeFileSync(join(src, 'd9/var/db'), Buffer.alloc(6 << 20, 4)); // changed
    rmSync(join(src, 'd9/var/log.2')); // gone: nothing to read, nothing to report
    // A directory on the way replaced by a symlink to one holding a changed file of the same name: not followed.
    const elsewhere = tempDir('cache-elsewhere');
    writeFileSync(join(elsewhere, 'large.bin'), Buffer.alloc(5 << 20, 5));
    rmSync(join(src, 'd1'), { recursive: true });
    symlinkSync(elsewhere, join(src, 'd1'));
    const plain = await backup({ source: src, repository: repo, parent: parent.snapshotId });
    const blobs = repo.index.size;
    const cached = await backup({ source: src, repository: repo, parent: parent.snapshotId, cacheDir });
    expect(cached.readAheadFiles).toBe(1);
    // Nothing new was stored: the file behind the symlink was not read.
    expect(repo.index.size).toBe(blobs);
    expect(cached.errors).toEqual([]);
    expect(await treeOf(repo, cached.snapshotId)).toEqual(await treeOf(repo, plain.snapshotId));
    const { durationMs: _a, newBytes: _c, storedBytes: _e, ...withCache } = cached.stats;
    const { durationMs: _b, newBytes: _d, storedBytes: _f, ...without } = plain.stats;
    expect(withCache).toEqual(without);
    // The new content of the database counts as new bytes when nothing stored it before.
    writeFileSync(join(src, 'd9/var/db'), Buffer.alloc(6 << 20, 6));
    const next = await backup({ source: src, repository: repo, cacheDir });
    expect(next.readAheadFiles).toBe(1);
    expect(next.stats.newBytes).toBeGreaterThan(0);
    const dst = tempDir('cache-dst');
    await restore({ repository: repo, snapshotId: next.snapshotId, target: dst });
    expect(describeTree(dst)).toEqual(describeTree(src));
  });

  it('still uses the listings of a cache file whose large-file list is malformed, without reading ahead', async () => {
    const repo = await newRepo();
    const src = makeSource();
    const cacheDir = tempDir('cache');
    const first = await backup({ source: src, repository: repo, cacheDir });
    const dir = join(cacheDir, 'listings', repo.config.id);
    const file = join(dir, readdirSync(dir)[0]!);
    const body = JSON.parse(readFileSync(file, 'utf8')) as { large: Record<string, unknown[]> };
    expect(body.large.d1).toHaveLength(1);
    body.large.d1 = [['../../elsewhere', '1', '2', '3', '4']];
    writeFileSync(file, JSON.stringify(body));
    writeFileSync(join(src, 'd1/large.bin'), Buffer.alloc(5 << 20, 8));
    const second = await backup({ source: src, repository: repo, parent: first.snapshotId, cacheDir });
    expect(second.readAheadFiles).toBe(0);
    expect(second.cachedDirs).toBeGreaterThan(0);
    const plain = await backup({ source: src, repository: repo, parent: first.snapshotId });
    expect(await treeOf(repo, second.snapshotId)).toEqual(await treeOf(repo, plain.snapshotId));
  });

  it('reports a skipped socket on every run and walks a directory with hard links in full', async () => {
    const repo = await newRepo();
    const src = makeSource();
    const cacheDir = tempDir('cache');
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(join(src, 'd4/e0/sock'), resolve));
    linkSync(join(src, 'd2/e1/tiny'), join(src, 'd2/e1/hard'));
    try {
      const first = await backup({ source: src, repository: repo, cacheDir });
      const second = await backup({ source: src, repository: repo, cacheDir });
      expect(first.skipped).toEqual([{ path: 'd4/e0/sock', reason: 'socket not backed up' }]);
      expect(second.skipped).toEqual(first.skipped);
      expect(await treeOf(repo, second.snapshotId)).toEqual(await treeOf(repo, first.snapshotId));
      expect(second.stats.unchangedFiles).toBe(first.stats.newFiles + first.stats.unchangedFiles);
    } finally {
      server.close();
    }
  });

  it('is not used for another parent, other exclude patterns or when unreadable, and the backups stay right', async () => {
    const repo = await newRepo();
    const src = makeSource();
    const cacheDir = tempDir('cache');
    const run = (options: Partial<BackupOptions> = {}) => backup({ source: src, repository: repo, cacheDir, ...options });
    const first = await run();
    const second = await run();
    // The cache now describes `second`: a backup against `first` reads the parent's listings.
    let reads = treeReads(repo);
    const againstFirst = await run({ parent: first.snapshotId });
    expect(reads.count()).toBeGreaterThan(0);
    expect(await treeOf(repo, againstFirst.snapshotId)).toEqual(await treeOf(repo, second.snapshotId));
    reads = treeReads(repo);
    const excluding = await run({ excludes: ['tiny'] });
    expect(reads.count()).toBeGreaterThan(0);
    expect(excluding.stats.files).toBe(first.stats.files - 36);
    const dir = join(cacheDir, 'listings', repo.config.id);
    for (const f of readdirSync(dir)) writeFileSync(join(dir, f), '{"v":1,"dirs":[["",');
    reads = treeReads(repo);
    const afterGarbage = await run({ excludes: ['tiny'] });
    expect(reads.count()).toBeGreaterThan(0);
    expect(await treeOf(repo, afterGarbage.snapshotId)).toEqual(await treeOf(repo, excluding.snapshotId));
  });

  it('removes cache files no backup wrote for 30 days, and their repository directories once empty', () => {
    const listings = join(tempDir('cache'), 'listings');
    const file = (repo: string, name: string, daysOld: number) => {
      mkdirSync(join(listings, repo), { recursive: true });
      writeFileSync(join(listings, repo, name), '{}');
      const when = Date.now() / 1000 - daysOld * 86400;
      utimesSync(join(listings, repo, name), when, when);
    };
    file('gone', 'a.json', 40);
    file('kept', 'old.json', 31);
    file('kept', 'new.json', 1);
    removeExpired(listings, Date.now() - 30 * 86400 * 1000);
    expect(readdirSync(listings)).toEqual(['kept']);
    expect(readdirSync(join(listings, 'kept'))).toEqual(['new.json']);
  });
});
