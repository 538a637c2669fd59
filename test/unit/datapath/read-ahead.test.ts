import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScanAhead, walkOrder } from '../../../src/datapath/scan-ahead.js';
import { TreeAhead } from '../../../src/datapath/tree-ahead.js';
import type { TreeEntry } from '../../../src/datapath/tree.js';
import type { BlobId } from '../../../src/datapath/ids.js';
import { backup, startSourceScan } from '../../../src/datapath/uploader.js';
import { restore } from '../../../src/datapath/restorer.js';
import { cleanupTempDirs, describeTree, newRepo, reshapeNestedDirs, tempDir, writeNestedDirs } from './helpers.js';

afterAll(cleanupTempDirs);

/** Made-up blob IDs (any text will do for these fakes). */
const ids = (...names: string[]) => names as BlobId[];

/** A fake store of listings: blob ID → NDJSON entries, with a log of the blobs read. */
function listings(): { add: (id: string, entries: Partial<TreeEntry>[]) => void; load: (id: string) => Promise<Buffer>; reads: string[]; failing: Set<string> } {
  const blobs = new Map<string, Buffer>();
  const reads: string[] = [];
  const failing = new Set<string>();
  return {
    reads,
    failing,
    add: (id, entries) => blobs.set(id, Buffer.from(entries.map((e) => JSON.stringify({ m: 0o755, u: 0, g: 0, mt: '0', ...e }) + '\n').join(''))),
    load: async (id) => {
      reads.push(id);
      await new Promise((r) => setImmediate(r));
      if (failing.has(id)) throw new Error(`cannot read ${id}`);
      const b = blobs.get(id);
      if (!b) throw new Error(`no blob ${id}`);
      return b;
    },
  };
}

describe('TreeAhead', () => {
  function sample() {
    const l = listings();
    l.add('root', [{ n: 'a', t: 'd', sub: ids('a') }, { n: 'b', t: 'd', sub: ids('b1', 'b2') }, { n: 'f', t: 'f', s: 1 }]);
    l.add('a', [{ n: 'x', t: 'd', sub: ids('ax') }, { n: 'y', t: 'f' }]);
    l.add('ax', []);
    l.add('b1', [{ n: 'c', t: 'd', sub: ids('bc') }]);
    l.add('b2', [{ n: 'd', t: 'f' }]);
    l.add('bc', [{ n: 'z', t: 'f' }]);
    return l;
  }

  it('hands the walk each listing in walk order, parsed, with listings in several blobs joined', async () => {
    const l = sample();
    const ahead = new TreeAhead(ids('root'), l.load);
    expect([...(await ahead.take(ids('root')))!.keys()]).toEqual(['a', 'b', 'f']);
    expect([...(await ahead.take(ids('a')))!.keys()]).toEqual(['x', 'y']);
    expect((await ahead.take(ids('ax')))!.size).toBe(0);
    expect([...(await ahead.take(ids('b1', 'b2')))!.keys()]).toEqual(['c', 'd']);
    expect((await ahead.take(ids('bc')))!.get('z')?.t).toBe('f');
    ahead.stop();
    expect(new Set(l.reads)).toEqual(new Set(['root', 'a', 'ax', 'b1', 'b2', 'bc']));
  });

  it('drops the listings the walk went past and still serves the later ones', async () => {
    const l = sample();
    const ahead = new TreeAhead(ids('root'), l.load);
    await ahead.take(ids('root'));
    // Directory `a` is gone from the source: the walk goes straight to `b`, then below it.
    expect([...(await ahead.take(ids('b1', 'b2')))!.keys()]).toEqual(['c', 'd']);
    expect(ahead.take(ids('a'))).toBeUndefined();
    expect((await ahead.take(ids('bc')))!.size).toBe(1);
    ahead.stop();
  });

  it('leaves a listing it could not read to the walk, and one it never queued', async () => {
    const l = sample();
    l.failing.add('a');
    const ahead = new TreeAhead(ids('root'), l.load);
    await ahead.take(ids('root'));
    expect(await ahead.take(ids('a'))).toBeUndefined();
    expect(ahead.take(ids('elsewhere'))).toBeUndefined();
    expect((await ahead.take(ids('b1', 'b2')))!.size).toBe(2);
    ahead.stop();
  });
});

describe('walkOrder', () => {
  it('orders paths as the walk visits them: a directory, then what is under it, then its later siblings', () => {
    const walk = ['/r', '/r/a', '/r/a/z', '/r/a-b', '/r/b', '/r/b/a'];
    expect([...walk].reverse().sort(walkOrder)).toEqual(walk);
    expect(walkOrder('/r/a', '/r/a')).toBe(0);
  });
});

describe('ScanAhead', () => {
  it('lists and lstats directories in walk order, leaving out excluded ones and the unreadable to the walk', async () => {
    const root = tempDir('scan');
    mkdirSync(join(root, 'b/deep'), { recursive: true });
    mkdirSync(join(root, 'a'));
    mkdirSync(join(root, 'skip'));
    writeFileSync(join(root, 'b/deep/f'), 'x');
    writeFileSync(join(root, 'a/2'), '22');
    writeFileSync(join(root, 'a/1'), '1');
    const scan = new ScanAhead(root, ['skip']);
    const top = (await scan.take(root));
    expect(top.names).toEqual(['a', 'b', 'skip']);
    expect(top.stats[1]!.isDirectory()).toBe(true);
    const a = (await scan.take(join(root, 'a')));
    expect(a.names).toEqual(['1', '2']);
    expect(a.stats.map((s) => Number(s!.size))).toEqual([1, 2]);
    expect((await scan.take(join(root, 'b'))).names).toEqual(['deep']);
    expect((await scan.take(join(root, 'b/deep'))).names).toEqual(['f']);
    expect((await scan.take(join(root, 'skip'))).names).toBeUndefined();
    scan.stop();
  });

  it('leaves to the walk a directory it went past, and goes on with the later ones', async () => {
    const root = tempDir('scan');
    for (const d of ['a', 'b', 'c']) mkdirSync(join(root, d));
    const scan = new ScanAhead(root, []);
    expect((await scan.take(root)).names).toEqual(['a', 'b', 'c']);
    expect((await scan.take(join(root, 'b'))).names).toEqual([]);
    // 'a' was dropped when the walk took 'b'; 'bb' was never seen.
    expect((await scan.take(join(root, 'a'))).names).toBeUndefined();
    expect((await scan.take(join(root, 'bb'))).names).toBeUndefined();
    expect((await scan.take(join(root, 'c'))).names).toEqual([]);
    scan.stop();
  });

  it('scans a tree larger than its room ahead whole, as the walk takes it', async () => {
    const root = tempDir('scan');
    const dirs = Array.from({ length: 24 }, (_, i) => `d${String(i).padStart(2, '0')}`);
    for (const d of dirs) {
      mkdirSync(join(root, d));
      for (let f = 0; f < 1000; f++) writeFileSync(join(root, d, String(f)), '');
    }
    const scan = new ScanAhead(root, []);
    expect((await scan.take(root)).names).toEqual(dirs);
    for (const d of dirs) {
      const got = await scan.take(join(root, d));
      expect(got.names).toHaveLength(1000);
      expect(got.stats.every((s) => s?.isFile() && s.size === 0n)).toBe(true);
    }
    scan.stop();
  });

  it('leaves everything to the walk once stopped', async () => {
    const root = tempDir('scan');
    mkdirSync(join(root, 'a'));
    const scan = new ScanAhead(root, []);
    scan.stop();
    expect((await scan.take(root)).names).toBeUndefined();
  });

  it('reports a directory it could not list as not scanned', async () => {
    if (process.getuid?.() === 0) return; // root reads any directory
    const root = tempDir('scan');
    mkdirSync(join(root, 'locked'));
    chmodSync(join(root, 'locked'), 0);
    const scan = new ScanAhead(root, []);
    await scan.take(root);
    expect((await scan.take(join(root, 'locked'))).names).toBeUndefined();
    scan.stop();
    chmodSync(join(root, 'locked'), 0o755);
  });
});

describe('incremental backup with listings read ahead', () => {
  it('matches the source after directories are added, removed, replaced by files and changed deep down', async () => {
    const repo = await newRepo();
    const src = tempDir('src');
    writeNestedDirs(src, 30, 4);
    const first = await backup({ source: src, repository: repo });
    const unchanged = await backup({ source: src, repository: repo });
    expect(unchanged.stats.newFiles).toBe(0);
    expect(unchanged.stats.unchangedFiles).toBe(first.stats.files);
    reshapeNestedDirs(src, { newIn: 'd12', changedIn: 'd20/e3' });
    mkdirSync(join(src, 'd29/e0/leaf/more'));
    const changed = await backup({ source: src, repository: repo });
    expect(changed.parent).toBe(unchanged.snapshotId);
    expect(changed.errors).toEqual([]);
    expect(changed.stats.newFiles).toBe(3);
    const dst = tempDir('dst');
    await restore({ repository: repo, snapshotId: changed.snapshotId, target: dst });
    expect(describeTree(dst)).toEqual(describeTree(src));
  });

  it('takes over a scan begun before the repository was opened, and stops it; a scan of another path is left unused', async () => {
    const repo = await newRepo();
    const src = tempDir('src');
    writeNestedDirs(src, 5, 3);
    const scan = startSourceScan(src);
    const first = await backup({ source: src, repository: repo, scan });
    expect(first.errors).toEqual([]);
    expect((await scan.take(src)).names).toBeUndefined(); // stopped by the backup
    const elsewhere = startSourceScan(tempDir('other'));
    const second = await backup({ source: src, repository: repo, scan: elsewhere });
    expect(second.stats.unchangedFiles).toBe(first.stats.files);
    const dst = tempDir('dst');
    await restore({ repository: repo, snapshotId: second.snapshotId, target: dst });
    expect(describeTree(dst)).toEqual(describeTree(src));
  });
});
