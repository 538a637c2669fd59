import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { Repository } from '../../../src/datapath/repository.js';
import { WrongPasswordError, RepositoryExistsError, RepositoryNotFoundError } from '../../../src/datapath/errors.js';
import { createChunker, referenceCut } from '../../../src/datapath/chunker.js';
import { cgroupCpuLimit, usableCpus } from '../../../src/datapath/cpu.js';
import { sampledEntropy, worthCompressing } from '../../../src/datapath/compress.js';
import { backup } from '../../../src/datapath/uploader.js';
import { readTree } from '../../../src/datapath/tree.js';
import { cleanupTempDirs, FAST_KDF, newRepo, PASSWORD, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

describe('passwords and keys', () => {
  it('rejects a wrong password with a clear error', async () => {
    const store = new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' });
    await Repository.init({ store, password: PASSWORD, kdf: FAST_KDF });
    await expect(Repository.open({ store, password: 'nope' })).rejects.toBeInstanceOf(WrongPasswordError);
    await expect(Repository.open({ store, password: 'nope' })).rejects.toThrow('wrong password or no key file for it');
  });

  it('refuses to init over an existing repository and to open a missing one', async () => {
    const store = new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' });
    await expect(Repository.open({ store, password: PASSWORD })).rejects.toBeInstanceOf(RepositoryNotFoundError);
    await Repository.init({ store, password: PASSWORD, kdf: FAST_KDF });
    await expect(Repository.init({ store, password: PASSWORD, kdf: FAST_KDF })).rejects.toBeInstanceOf(RepositoryExistsError);
  });

  it('rotates a password without re-encrypting: add new, remove old', async () => {
    const store = new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' });
    const repo = await Repository.init({ store, password: PASSWORD, kdf: FAST_KDF });
    const oldKey = repo.keyId;
    const newKey = await repo.keyRing.add('new password', FAST_KDF);
    const reopened = await Repository.open({ store, password: 'new password' });
    expect(reopened.keyId).toBe(newKey);
    expect(reopened.keys.encryption.equals(repo.keys.encryption)).toBe(true);
    await expect(reopened.keyRing.remove(newKey)).rejects.toThrow(/opened with/);
    await reopened.keyRing.remove(oldKey.slice(0, 10));
    await expect(Repository.open({ store, password: PASSWORD })).rejects.toBeInstanceOf(WrongPasswordError);
    expect((await reopened.keyRing.list()).map((k) => k.id)).toEqual([newKey]);
  });

  it('stores nothing readable about the master keys in the key file', async () => {
    const store = new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' });
    const repo = await Repository.init({ store, password: PASSWORD, kdf: FAST_KDF });
    const text = (await store.get(`keys/${repo.keyId}`)).toString();
    expect(text).not.toContain(repo.keys.encryption.toString('base64'));
    expect(JSON.parse(text).kdf).toMatchObject({ name: 'scrypt', N: 1024, r: 8, p: 1 });
  });
});

describe('chunker', () => {
  const params = { min: 16 * 1024, avg: 64 * 1024, max: 256 * 1024, seed: randomBytes(32).toString('base64') };
  const cut = (data: Buffer) => {
    const c = createChunker(params);
    const out: number[] = [];
    for (let at = 0; at < data.length; ) {
      const n = c.next(data, at, data.length);
      out.push(n);
      at += n;
    }
    return out;
  };

  it('cuts within min and max, covering all the data', () => {
    const data = randomBytes(8 << 20);
    const sizes = cut(data);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(data.length);
    for (const s of sizes.slice(0, -1)) {
      expect(s).toBeGreaterThan(params.min);
      expect(s).toBeLessThanOrEqual(params.max);
    }
    const avg = data.length / sizes.length;
    expect(avg).toBeGreaterThan(params.min);
    expect(avg).toBeLessThan(params.max / 2);
  });

  it('finds the same boundaries after an insertion near the start (content-defined)', () => {
    const data = randomBytes(4 << 20);
    const shifted = Buffer.concat([data.subarray(0, 1000), randomBytes(77), data.subarray(1000)]);
    const ends = (sizes: number[], offset: number) => {
      const out = new Set<number>();
      let at = 0;
      for (const s of sizes) out.add((at += s) - offset);
      return out;
    };
    const a = ends(cut(data), 0);
    const b = ends(cut(shifted), 77);
    const common = [...a].filter((x) => b.has(x)).length;
    expect(common / a.size).toBeGreaterThan(0.8);
  });

  it('cuts exactly where the byte-by-byte definition does (two-bytes-per-step loop)', () => {
    const c = createChunker(params);
    for (let round = 0; round < 3; round++) {
      const data = randomBytes(3 << 20);
      for (let at = 0; at < data.length; ) {
        const n = c.next(data, at, data.length);
        expect(n).toBe(referenceCut(params, data, at, data.length));
        at += n;
      }
    }
  });

  it('depends on the repository seed', () => {
    const data = randomBytes(2 << 20);
    const other = createChunker({ ...params, seed: randomBytes(32).toString('base64') });
    expect(other.next(data, 0, data.length)).not.toBe(createChunker(params).next(data, 0, data.length));
  });
});

describe('cpu limit and compression heuristics', () => {
  it('reads cgroup v2 and v1 quotas', () => {
    const v2 = tempDir('cg');
    writeFileSync(join(v2, 'cpu.max'), '150000 100000\n');
    expect(cgroupCpuLimit(v2)).toBe(1.5);
    const v1 = tempDir('cg');
    mkdirSync(join(v1, 'cpu'));
    writeFileSync(join(v1, 'cpu/cpu.cfs_quota_us'), '-1\n');
    expect(cgroupCpuLimit(v1)).toBeUndefined();
    writeFileSync(join(v1, 'cpu/cpu.cfs_quota_us'), '50000\n');
    writeFileSync(join(v1, 'cpu/cpu.cfs_period_us'), '100000\n');
    expect(cgroupCpuLimit(v1)).toBe(0.5);
    expect(usableCpus(v1)).toBe(1);
  });

  it('skips compression for random data and tries it for text', () => {
    expect(sampledEntropy(randomBytes(1 << 20))).toBeGreaterThan(7.9);
    expect(worthCompressing(randomBytes(1 << 20))).toBe(false);
    expect(worthCompressing(Buffer.from('some source code here\n'.repeat(10000)))).toBe(true);
  });
});

describe('chunking a file while reading it', () => {
  it('cuts a large file exactly where chunking the whole file in memory does', async () => {
    const sizes = { min: 64 * 1024, avg: 128 * 1024, max: 512 * 1024 };
    const repo = await newRepo(undefined, { chunkSizes: sizes });
    const src = tempDir('chunk-src');
    // Random data with long zero-free stretches of low-entropy text in between, so some chunks run to the maximum.
    const parts: Buffer[] = [];
    for (let i = 0; i < 12; i++) parts.push(randomBytes(700 * 1024), Buffer.from('abc'.repeat(300 * 1024)));
    const data = Buffer.concat(parts);
    writeFileSync(join(src, 'big.bin'), data);
    const { snapshotId } = await backup({ source: src, repository: repo });
    const snap = await repo.snapshots.find(snapshotId);
    let stored: unknown[] = [];
    for await (const e of readTree(snap.tree, (id) => repo.loadTreeBlob(id))) if (e.n === 'big.bin') stored = e.c ?? [];
    const chunker = createChunker(repo.config.chunker);
    const expected: string[] = [];
    for (let at = 0; at < data.length; ) {
      const len = chunker.next(data, at, data.length);
      expected.push(repo.hasher.id(data.subarray(at, at + len)).toString('hex'));
      at += len;
    }
    expect(stored).toEqual(expected);
  });
});
