/** Which index blobs are current (kopia's epoch manager and legacy compaction rules) and where blobs live on disk. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KopiaBlobStorage, shardedPath } from '../../../../src/datapath/kopia/blob-storage.js';
import { contentCipher } from '../../../../src/datapath/kopia/content-crypto.js';
import { activeIndexBlobs, completeSets, epochOf, longestRangeChain } from '../../../../src/datapath/kopia/index-blobs.js';
import { FilesystemObjectStore } from '../../../../src/plugins/object-store/index.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** A flat (object-store style) repository holding empty blobs of these names. */
async function storage(ids: string[]): Promise<KopiaBlobStorage> {
  const root = mkdtempSync(join(tmpdir(), 'kopia-blobs-'));
  roots.push(root);
  for (const id of ['kopia.repository', ...ids]) writeFileSync(join(root, id), '');
  return (await KopiaBlobStorage.open(new FilesystemObjectStore({ root })))!;
}

const H = '0123456789abcdef0123456789abcdef';
const cipher = contentCipher('AES256-GCM-HMAC-SHA256', Buffer.alloc(32));

describe('epoch index management', () => {
  it('uses the longest range checkpoint chain, settled single-epoch compactions, and uncompacted blobs for the rest', async () => {
    const blobs = await storage([
      'xe0', 'xe1', 'xe2', 'xe3', 'xe4', 'xe5', 'xe6',
      // epochs 0-1 as a range checkpoint (complete: 1 of 1), and 0-2 incomplete (1 of 2): the complete one counts
      `xr0_1_${H}-sa-c1`, `xr0_2_${H}-sb-c2`,
      // epoch 2 compacted, epoch 5 compacted but not settled (write epoch 6: settled up to 4)
      `xs2_${H}-sc-c1`, `xs5_${H}-sd-c1`,
      `xn2_${H}-se-c1`, `xn3_${H}-sf-c1`, `xn3_${H.replace('0', '1')}-sg-c1`, `xn5_${H}-sh-c1`, `xn6_${H}-si-c1`, `xn7_${H}-sj-c1`, `xn8_${H}-sk-c1`,
    ]);
    const active = (await activeIndexBlobs(blobs, { epochs: true, cipher })).map((b) => b.id);
    expect(active).toEqual([
      `xr0_1_${H}-sa-c1`,
      `xs2_${H}-sc-c1`,
      `xn3_${H}-sf-c1`, `xn3_${H.replace('0', '1')}-sg-c1`,
      `xn5_${H}-sh-c1`,
      `xn6_${H}-si-c1`,
      `xn7_${H}-sj-c1`,
    ]);
  });

  it('without markers reads epoch 0 and 1', async () => {
    const blobs = await storage([`xn0_${H}-s1-c1`, `xn1_${H}-s2-c1`, `xn2_${H}-s3-c1`]);
    expect((await activeIndexBlobs(blobs, { epochs: true, cipher })).map((b) => b.id)).toEqual([`xn0_${H}-s1-c1`, `xn1_${H}-s2-c1`]);
  });

  it('complete sets, epochs of IDs and the longest chain', () => {
    const b = (id: string) => ({ id, length: 0, timestamp: new Date(0) });
    expect(completeSets([b('a-s1-c2'), b('b-s2-c1'), b('c-s1-c2'), b('plain')]).map((s) => s.map((x) => x.id))).toEqual([['b-s2-c1'], ['a-s1-c2', 'c-s1-c2'], ['plain']]);
    expect(epochOf('xn12_abc-s-c1')).toBe(12);
    expect(epochOf('xr3_7_abc')).toBe(3);
    expect(epochOf('xe9')).toBe(9);
    const r = (min: number, max: number) => ({ min, max, blobs: [] });
    expect(longestRangeChain([r(0, 3), r(0, 5), r(4, 9), r(6, 7)]).map((x) => `${x.min}-${x.max}`)).toEqual(['0-3', '4-9']);
    expect(longestRangeChain([r(1, 3)])).toEqual([]);
  });
});

describe('legacy index management', () => {
  it('reads every n blob but the upgrade poison', async () => {
    const blobs = await storage([`n${H}`, `n${H.replace('0', '2')}-s1`, 'n00000000000000000000000000000000-repository_unreadable_by_this_kopia_version_upgrade_required']);
    expect((await activeIndexBlobs(blobs, { epochs: false, cipher })).map((b) => b.id)).toEqual([`n${H}`, `n${H.replace('0', '2')}-s1`]);
  });
});

describe('sharded filesystem layout', () => {
  it('maps blob IDs to paths as kopia does', () => {
    const p = { default: [1, 3], maxNonShardedLength: 20 };
    expect(shardedPath(p, 'kopia.repository')).toBe('kopia.repository');
    expect(shardedPath(p, `p${H}-s1`)).toBe(`p/012/3456789abcdef0123456789abcdef-s1`);
    expect(shardedPath({ default: [3, 3], maxNonShardedLength: 20 }, `p${H}`)).toBe(`p01/234/56789abcdef0123456789abcdef`);
    expect(shardedPath({ default: [], maxNonShardedLength: 20 }, `p${H}`)).toBe(`p${H}`);
    expect(shardedPath({ default: [1, 3], maxNonShardedLength: 20, overrides: [{ prefix: 'x', shards: [2] }] }, `xn0_${H}`)).toBe(`xn/0_${H}`);
  });

  it('lists blobs by prefix across shard directories and the root', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kopia-sharded-'));
    roots.push(root);
    const put = (rel: string) => {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), 'x');
    };
    put('kopia.repository.f');
    put('.shards');
    writeFileSync(join(root, '.shards'), '{"default":[1,3],"maxNonShardedLength":20}');
    put('xe0.f');
    put('xe1.f');
    put(`x/n0_/${H}-s1-c1.f`);
    put(`p/012/3456789abcdef0123456789abcdef.f`);
    const blobs = (await KopiaBlobStorage.open(new FilesystemObjectStore({ root })))!;
    expect((await blobs.list('xe')).map((b) => b.id)).toEqual(['xe0', 'xe1']);
    expect((await blobs.list('xn0_')).map((b) => b.id)).toEqual([`xn0_${H}-s1-c1`]);
    expect((await blobs.list('x')).map((b) => b.id)).toEqual(['xe0', 'xe1', `xn0_${H}-s1-c1`]);
    expect((await blobs.list('p')).map((b) => b.id)).toEqual([`p${H}`]);
    expect((await blobs.get(`p${H}`)).toString()).toBe('x');
  });
});
